"""The default shares of the usable window that summarizing turns on (DESIGN §5).

One place for each: the settings' defaults (`SummarizationConfig`) and the figures a
request is measured with before any settings are known (`ContextState`,
`ContextBuilder`) read them here.
"""

from __future__ import annotations

# Summarize when the next request would use this share of the usable window.
DEFAULT_TRIGGER_RATIO = 0.80
# No new automatic trigger until usage dropped below this (hysteresis).
DEFAULT_RESET_RATIO = 0.70
# What a summary brings the next request down to.
DEFAULT_TARGET_RATIO = 0.60
