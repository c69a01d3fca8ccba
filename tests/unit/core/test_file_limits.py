"""The API's limits on a whole request's files, and which files a request re-sends
(app/core/file_limits.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.attachments import (
    MAX_PDF_BYTES,
    MAX_REQUEST_BYTES,
    Attachment,
    AttachmentKind,
    AttachmentRefusedError,
    base64_size,
)
from app.core.file_limits import (
    MAX_REQUEST_PDF_PAGES,
    MIN_FILE_BYTES_BUDGET,
    FilePlan,
    by_file_id,
    check_message,
    file_bytes_budget,
    is_large_image,
    max_images,
    not_resent_note,
    plan_files,
    sent_bytes,
)
from tests.fakes.server_fixtures import HAIKU_4_5 as SMALL
from tests.fakes.server_fixtures import SONNET_5_5 as WIDE


def last(files: list[tuple[int, list[Attachment]]]) -> int:
    return files[-1][0]


def words(text: str) -> int:
    return len(text.split())


def pdf_file(name: str, pages: int, size: int = 200_000) -> Attachment:
    return Attachment(
        "a" * 64, name, "application/pdf", AttachmentKind.PDF, size, pages * 4600, True, pages=pages
    )


def image(name: str, side: int = 1000, size: int = 300_000) -> Attachment:
    return Attachment(
        "b" * 64, name, "image/png", AttachmentKind.IMAGE, size, 1600, width=side, height=side
    )


def text_file(name: str, size: int = 1000) -> Attachment:
    return Attachment("c" * 64, name, "text/plain", AttachmentKind.TEXT, size, size // 4)


def test_the_limits_follow_the_documentation() -> None:
    assert MAX_REQUEST_PDF_PAGES == 100  # pdf-support
    assert max_images(SMALL) == 100 and max_images(WIDE) == 600  # vision
    assert MAX_REQUEST_BYTES == 32_000_000  # errors: 32 MB
    assert file_bytes_budget(SMALL) > file_bytes_budget(WIDE) >= MIN_FILE_BYTES_BUDGET
    # The largest PDF one may attach fits any model's request once encoded.
    big = pdf_file("big.pdf", 1, size=MAX_PDF_BYTES)
    assert sent_bytes(big) <= MIN_FILE_BYTES_BUDGET
    assert is_large_image(image("x", side=2001)) and not is_large_image(image("x", side=2000))


def test_files_inside_the_limits_all_go() -> None:
    files = [(1, [pdf_file("a.pdf", 40)]), (3, [pdf_file("b.pdf", 40)]), (5, [image("c.png")])]
    assert plan_files(files, WIDE, words, newest=last(files)) == FilePlan()


def test_two_pdfs_of_60_pages_send_the_newest_and_a_note_for_the_older() -> None:
    # pdf-support: 100 pages for the whole request, not for each PDF.
    files = [(1, [pdf_file("report.pdf", 60)]), (3, [pdf_file("annex.pdf", 60)])]
    plan = plan_files(files, WIDE, words, newest=last(files))
    assert [f.name for f in plan.left_out] == ["report.pdf"]
    assert plan.notes == {1: "[earlier file: report.pdf — not re-sent]"}
    assert not plan.sends(1, 0) and plan.sends(3, 0)
    assert plan.saved_tokens == 60 * 4600 - words(plan.notes[1])


def test_past_20_images_no_large_one_goes_and_the_oldest_are_left_out() -> None:
    # vision: more than 20 images in a request: each at most 2000×2000 px.
    files = [(index, [image(f"photo{index}.png", side=3000)]) for index in range(25)]
    plan = plan_files(files, WIDE, words, newest=last(files))
    sent = [i for i in range(25) if plan.sends(i, 0)]
    assert len(sent) <= 20
    assert sent == list(range(25 - len(sent), 25))  # the newest, in a row
    assert plan.left_out[0].name == "photo0.png"


def test_large_pictures_by_reference_leave_out_a_step_of_them_not_every_older_file() -> None:
    # Uploaded, their bytes are not the limit: the 20-picture rule is. The line still moves
    # in steps of it (a quarter: five pictures), never all the way to the newest message.
    files = [(index, [image(f"photo{index}.png", side=3000)]) for index in range(25)]
    plan = plan_files(files, WIDE, words, newest=last(files), by_reference=by_file_id)
    sent = [i for i in range(25) if plan.sends(i, 0)]
    assert 15 <= len(sent) <= 20
    assert sent == list(range(25 - len(sent), 25))


def test_small_images_count_up_to_100_on_a_200k_window_model() -> None:
    files = [(index, [image(f"p{index}.png", side=500, size=20_000)]) for index in range(130)]
    wide = plan_files(files, WIDE, words, newest=last(files))
    assert wide.left_out == ()
    small = plan_files(files, SMALL, words, newest=last(files))
    assert len(small.left_out) > 0 and 130 - len(small.left_out) <= 100


def test_the_bytes_of_the_whole_request_stay_inside_32_mb() -> None:
    files = [(index, [image(f"p{index}.jpg", size=3_000_000)]) for index in range(15)]
    plan = plan_files(files, WIDE, words, newest=last(files))
    kept = sum(sent_bytes(a) for m, group in files for i, a in enumerate(group) if plan.sends(m, i))
    assert 0 < kept <= file_bytes_budget(WIDE)
    assert plan.left_out


def test_when_the_newest_message_has_no_files_every_file_is_an_older_one() -> None:
    files = [(1, [pdf_file("a.pdf", 60)]), (3, [pdf_file("b.pdf", 60)])]
    plan = plan_files(files, WIDE, words, newest=5)
    assert [f.name for f in plan.left_out] == ["a.pdf"]
    both = [(1, [pdf_file("a.pdf", 60), pdf_file("b.pdf", 60)])]
    plan = plan_files(both, WIDE, words, newest=None)
    assert plan.notes == {1: "[earlier file: a.pdf — not re-sent]"}


def test_a_message_note_names_every_file_it_leaves_out() -> None:
    assert not_resent_note(["a.pdf", "b.png"]) == "[earlier files: a.pdf, b.png — not re-sent]"
    files = [(1, [pdf_file("a.pdf", 50), pdf_file("b.pdf", 30)]), (2, [pdf_file("c.pdf", 90)])]
    plan = plan_files(files, WIDE, words, newest=last(files))
    assert plan.notes == {1: "[earlier files: a.pdf, b.pdf — not re-sent]"}


def test_the_line_moves_in_steps_so_the_start_of_the_request_stays_the_same() -> None:
    # One image more each turn: the files left out change only every few turns, so the
    # request's prefix (and its prompt cache) holds in between.
    changes = 0
    before: tuple[str, ...] = ()
    for turns in range(20, 60):
        files = [(index, [image(f"p{index}.jpg", size=2_000_000)]) for index in range(turns)]
        left = tuple(f.name for f in plan_files(files, WIDE, words, newest=last(files)).left_out)
        assert left[: len(before)] == before  # what was left out stays left out
        changes += left != before
        before = left
    # About nine such images fit; a step is a quarter of the limits (two of them): the
    # line moved at most every other turn, where without steps it would move every turn.
    assert changes <= 40 / 2


def test_a_single_message_over_a_limit_is_refused_naming_the_file_and_the_limit() -> None:
    with pytest.raises(AttachmentRefusedError) as refused:
        check_message([pdf_file("a.pdf", 60), pdf_file("b.pdf", 60)], WIDE)
    assert "“b.pdf”" in refused.value.message and "100 pages" in refused.value.message
    with pytest.raises(AttachmentRefusedError) as refused:
        check_message([image(f"p{i}.png", side=2500) for i in range(21)], WIDE)
    assert "2500 × 2500" in refused.value.message and "2000 × 2000" in refused.value.message
    with pytest.raises(AttachmentRefusedError, match="at most 100 in one message"):
        check_message([image(f"p{i}.png", side=100, size=1000) for i in range(101)], SMALL)
    with pytest.raises(AttachmentRefusedError, match="as sent"):
        check_message([image(f"p{i}.jpg", size=3_500_000) for i in range(8)], WIDE)
    with pytest.raises(AttachmentRefusedError, match="once encoded"):
        check_message([image("huge.png", size=4_600_000)], WIDE)
    with pytest.raises(AttachmentRefusedError):
        plan_files([(1, [pdf_file("a.pdf", 60), pdf_file("b.pdf", 60)])], WIDE, words, newest=1)


_KINDS = st.sampled_from(["pdf", "image", "large", "text"])


def _file(kind: str, index: int, size: int, pages: int) -> Attachment:
    if kind == "pdf":
        return pdf_file(f"f{index}.pdf", pages, size)
    if kind == "text":
        return text_file(f"f{index}.txt", size)
    return image(f"f{index}.png", side=2500 if kind == "large" else 800, size=min(size, 3_000_000))


@st.composite
def conversations(draw: st.DrawFn) -> list[tuple[int, list[Attachment]]]:
    messages = draw(st.integers(1, 12))
    result: list[tuple[int, list[Attachment]]] = []
    index = 0
    for message in range(messages):
        group = []
        for _ in range(draw(st.integers(1, 4))):
            kind = draw(_KINDS)
            group.append(
                _file(kind, index, draw(st.integers(1_000, 9_000_000)), draw(st.integers(1, 60)))
            )
            index += 1
        try:  # a message is checked against the model it is sent to: here, both
            check_message(group, SMALL)
            check_message(group, WIDE)
        except AttachmentRefusedError:
            continue
        result.append((message, group))
    return result or [(0, [text_file("t.txt")])]


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_every_plan_is_inside_the_limits_and_leaves_out_only_the_oldest(
    files: list[tuple[int, list[Attachment]]],
) -> None:
    for model in (SMALL, WIDE):
        plan = plan_files(files, model, words, newest=last(files))
        flat = [(m, i, a) for m, group in files for i, a in enumerate(group)]
        sent = [a for m, i, a in flat if plan.sends(m, i)]
        flags = [plan.sends(m, i) for m, i, _a in flat]
        assert flags == sorted(flags)  # left out: a run of the oldest
        assert all(plan.sends(files[-1][0], i) for i in range(len(files[-1][1])))
        check_message(sent, model)  # the whole request fits, as one message would
        assert plan.saved_tokens >= 0
        if len(files) > 1:  # one message more never brings back a file left out
            earlier = plan_files(files[:-1], model, words, newest=last(files[:-1]))
            assert {(f.message_id, f.name) for f in earlier.left_out} <= {
                (f.message_id, f.name) for f in plan.left_out
            }
    assert base64_size(3) == 4
