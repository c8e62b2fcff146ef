"""`predict_scope`: pick a predictor from settings, run it, fall back to `lexical` when `llm` fails.

`auto` means `llm` when `OPENAI_API_KEY` is set, else `lexical`. Whenever `llm` was asked for (or
implied by `auto`) and could not answer (no key, timeout, unreachable endpoint, API error,
unusable output), the scope comes from `lexical` and `fallback_reason` says why; the battle goes
on. A missing key is warned about once per process (an `eval` run: one line, not one per task; each
result still records its `fallback_reason`); other failures are warned about per task. `ground_truth`, `all`, `upstream_first20` and `appworld_agents` never fall back: their errors
are the caller's to see. `none` is `all` (every API: no scoping).
"""

from __future__ import annotations

import logging
import os
import threading

from kernel.errors import BadInputError
from green_agent.models.scope import PREDICTOR_CHOICES as MODEL_PREDICTOR_CHOICES
from green_agent.models.scope import ScopePrediction
from green_agent.scoping.appworld_agents import AppWorldAgentsPredictor
from green_agent.scoping.base import Predictor, ScopePredictorError
from green_agent.scoping.cache import DEFAULT_CACHE_DIR, PredictionCache
from green_agent.scoping.lexical import LexicalPredictor
from green_agent.scoping.llm import DEFAULT_TIMEOUT_S, LlmPredictor
from green_agent.scoping.oracle import AllPredictor, GroundTruthPredictor, UpstreamFirst20Predictor
from kernel.settings import Settings
from kernel.world_data import WorldData

log = logging.getLogger(__name__)
PREDICTOR_CHOICES = MODEL_PREDICTOR_CHOICES
NO_KEY = "OPENAI_API_KEY is not set"
_no_key_warned = threading.Event()


def resolve_predictor(requested: str, settings: Settings) -> str:
    """The concrete predictor name for a request (`auto` resolved); raises BadInputError if unknown."""
    if requested not in PREDICTOR_CHOICES:
        raise BadInputError(f"unknown scope predictor {requested!r}; choose one of {', '.join(PREDICTOR_CHOICES)}")
    if requested == "auto":
        return "llm" if settings.openai_api_key else "lexical"
    return "all" if requested == "none" else requested


def build_predictor(name: str, settings: Settings, world: WorldData, cache: PredictionCache | None = None,
                    llm_timeout_s: float = DEFAULT_TIMEOUT_S) -> Predictor:
    """A ready predictor object for a concrete name."""
    cap = settings.max_predicted_apis
    if name == "lexical":
        return LexicalPredictor(world, cap=cap)
    if name == "llm":
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        return LlmPredictor(world, model=settings.scope_model, api_key=key, base_url=settings.openai_base_url,
                            cap=cap, cache=cache if cache is not None else PredictionCache(DEFAULT_CACHE_DIR),
                            timeout_s=llm_timeout_s)
    if name == "ground_truth":
        return GroundTruthPredictor(world, cap=cap)
    if name == "all":
        return AllPredictor(world)
    if name == "upstream_first20":
        return UpstreamFirst20Predictor(world, cap=cap)
    if name == "appworld_agents":
        env = {**os.environ, "APPWORLD_ROOT": str(settings.appworld_root)}
        if settings.openai_api_key:
            env["OPENAI_API_KEY"] = settings.openai_api_key.get_secret_value()
        return AppWorldAgentsPredictor(world, appworld_python=settings.appworld_python, model=settings.scope_model,
                                       cap=cap, env=env)
    raise BadInputError(f"unknown scope predictor {name!r}; choose one of {', '.join(PREDICTOR_CHOICES)}")


def predict_scope(task_id: str, instruction: str, settings: Settings, world: WorldData,
                  predictor: str = "auto", *, cache: PredictionCache | None = None,
                  llm_timeout_s: float = DEFAULT_TIMEOUT_S) -> ScopePrediction:
    """Scope one task with the requested predictor (see the module docstring for fallbacks)."""
    requested = predictor
    name = resolve_predictor(requested, settings)
    if requested in ("auto", "llm") and not settings.openai_api_key:
        return _fallback(task_id, instruction, settings, world, requested, NO_KEY)
    chosen = build_predictor(name, settings, world, cache, llm_timeout_s)
    try:
        prediction = chosen.predict(task_id, instruction)
    except ScopePredictorError as exc:
        if name != "llm":
            raise
        return _fallback(task_id, instruction, settings, world, requested, str(exc))
    return prediction.model_copy(update={"requested": requested})


def _fallback(task_id: str, instruction: str, settings: Settings, world: WorldData, requested: str,
              reason: str) -> ScopePrediction:
    if reason != NO_KEY:
        log.warning("scope predictor llm unavailable for %s (%s); using lexical", task_id, reason)
    elif not _no_key_warned.is_set():
        _no_key_warned.set()
        log.warning("%s: the %s scope predictor falls back to lexical (keyword matching over the API docs) for every "
                    "task of this run; set OPENAI_API_KEY or pass --predictor lexical to silence this", NO_KEY, requested)
    else:
        log.debug("scope predictor llm unavailable for %s (%s); using lexical", task_id, reason)
    prediction = LexicalPredictor(world, cap=settings.max_predicted_apis).predict(task_id, instruction)
    return prediction.model_copy(update={"requested": requested, "fallback_reason": f"llm: {reason}"})
