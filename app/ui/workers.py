"""Background threads. Workers never touch a widget: they only emit signals.

`ChatWorker` streams one reply and saves it as it arrives; `CallWorker` runs
one blocking call (list the models, check a key) off the GUI thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from app.core.context import BuiltRequest
from app.core.errors import ApiError, BugError, StorageError, UserFacingError
from app.core.models import Message, MessageStatus
from app.llm.provider import CancelToken, ChatProvider, ChatRequest, StreamCallbacks
from app.store.sessions import SessionStore

log = logging.getLogger(__name__)

# Streamed text is written to disk at least this often, so a crash loses at most this much.
SAVE_INTERVAL_SECONDS = 1.0

SOMETHING_WENT_WRONG = (
    "Something went wrong inside Cairn. Your messages are safe. "
    "The details were written to the log file."
)


class ChatWorker(QThread):
    """Streams one reply into an assistant message that already exists in the store.

    The GUI reads the text with `take_text()` when `text_arrived` fires; at most
    one such signal is ever queued, so a fast stream cannot flood the event loop.

    Signals:
        text_arrived: new text is ready; call `take_text()`.
        retry_scheduled(int, object): the SDK is retrying (attempt, seconds or None).
        reply_finished(Message): saved with status complete or stopped.
        reply_failed(Message, UserFacingError): saved with status error and the text so far.
    """

    text_arrived = Signal()
    retry_scheduled = Signal(int, object)
    reply_finished = Signal(object)
    reply_failed = Signal(object, object)

    def __init__(
        self,
        *,
        message_id: int,
        prepare: Callable[[ChatProvider], BuiltRequest],
        provider_factory: Callable[[], ChatProvider],
        store_factory: Callable[[], SessionStore],
        parent: QObject | None = None,
    ) -> None:
        """`prepare` builds the request on this thread: near the window's limit it
        asks the server for an exact count, which must not happen on the GUI thread."""
        super().__init__(parent)
        self.message_id = message_id
        self._prepare = prepare
        self.built: BuiltRequest | None = None
        self._provider_factory = provider_factory
        self._store_factory = store_factory
        self._cancel = CancelToken()
        self._lock = threading.Lock()
        self._text = ""
        self._signal_pending = False

    def cancel(self) -> None:
        """Ask the reply to stop; what arrived so far is kept (status stopped)."""
        self._cancel.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancel.cancelled

    def take_text(self) -> str:
        """The whole text so far; re-arms `text_arrived`."""
        with self._lock:
            self._signal_pending = False
            return self._text

    def run(self) -> None:
        try:
            store = self._store_factory()
        except UserFacingError as error:
            log.warning("Chat worker could not open the store: %s", error.detail or error)
            self.reply_failed.emit(None, error)
            return
        try:
            self._stream_into(store)
        finally:
            store.close()

    def _stream_into(self, store: SessionStore) -> None:
        last_save = time.monotonic()

        def on_text(delta: str) -> None:
            nonlocal last_save
            with self._lock:
                self._text += delta
                notify = not self._signal_pending
                self._signal_pending = True
                text = self._text
            if notify:
                self.text_arrived.emit()
            now = time.monotonic()
            if now - last_save >= SAVE_INTERVAL_SECONDS:
                last_save = now
                try:
                    store.update_message_content(self.message_id, text)
                except StorageError as error:
                    # Keep streaming: the final save below reports the problem if it persists.
                    log.warning("Could not save streamed text: %s", error)

        def on_retry(attempt: int, wait: float | None) -> None:
            self.retry_scheduled.emit(attempt, wait)

        callbacks = StreamCallbacks(on_text=on_text, on_retry=on_retry)
        try:
            provider = self._provider_factory()
            self.built = built = self._prepare(provider)
            request = ChatRequest(
                model=built.model,
                messages=built.messages,
                max_tokens=built.max_tokens,
                system=built.system,
            )
            result = provider.stream_reply(request, callbacks, self._cancel)
        except UserFacingError as error:
            received = self.take_text()
            partial = error.partial_text if isinstance(error, ApiError) else ""
            self._fail(store, error, partial if len(partial) >= len(received) else received)
            return
        except Exception:
            log.exception("Unexpected failure while streaming a reply")
            self._fail(store, _as_user_facing(BugError(SOMETHING_WENT_WRONG)), self.take_text())
            return
        status = MessageStatus.STOPPED if result.cancelled else MessageStatus.COMPLETE
        text = result.text if len(result.text) >= len(self._text) else self.take_text()
        try:
            message = store.finish_message(
                self.message_id, text, status, usage=result.usage, model=result.model
            )
        except StorageError as error:
            self.reply_failed.emit(None, error)
            return
        with self._lock:
            self._text = text
        self.reply_finished.emit(message)

    def _fail(self, store: SessionStore, error: UserFacingError, text: str) -> None:
        message: Message | None
        try:
            message = store.finish_message(self.message_id, text, MessageStatus.ERROR)
        except StorageError as storage_error:
            log.warning("Could not save the failed reply: %s", storage_error)
            message = None
        self.reply_failed.emit(message, error)


def _as_user_facing(error: BugError) -> UserFacingError:
    return UserFacingError(str(error), title="Something went wrong", retryable=True)


class CallWorker(QThread):
    """Runs one blocking call off the GUI thread.

    Signals:
        succeeded(object): the call's result.
        failed(object): a `UserFacingError` (bugs are logged and wrapped).
    """

    succeeded = Signal(object)
    failed = Signal(object)

    def __init__(self, call: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._call = call

    def run(self) -> None:
        try:
            result = self._call()
        except UserFacingError as error:
            self.failed.emit(error)
        except Exception:
            log.exception("Unexpected failure in a background task")
            self.failed.emit(_as_user_facing(BugError(SOMETHING_WENT_WRONG)))
        else:
            self.succeeded.emit(result)


class ThreadTracker(QObject):
    """Keeps running threads alive until they finish, and waits for them on quit.

    A dialog closed while its check is still running must not destroy a live
    QThread (Qt aborts); the tracker owns the reference instead.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._threads: set[QThread] = set()

    def start(self, thread: QThread) -> None:
        self._threads.add(thread)
        thread.finished.connect(lambda: self._threads.discard(thread))
        thread.start()

    @property
    def running(self) -> int:
        return sum(1 for thread in self._threads if thread.isRunning())

    def stop_all(self, timeout_ms: int = 15_000) -> None:
        """Cancel what can be cancelled, then wait for every thread."""
        for thread in list(self._threads):
            if isinstance(thread, ChatWorker):
                thread.cancel()
        for thread in list(self._threads):
            if not thread.wait(timeout_ms):
                log.warning("A background task did not stop in time: %s", type(thread).__name__)
        self._threads.clear()
