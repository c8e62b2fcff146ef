"""The LLM predictor: OpenAI chat completions with our few-shot prompt, strict parsing, disk cache.

Failures (no key, timeout, connection or API error, an answer naming no known API) raise
`ScopePredictorError` with a short reason; `select.predict_scope` falls back to `lexical`.
Secrets never reach messages: API error texts are redacted before they are raised.
"""

from __future__ import annotations

import re
from functools import cached_property

from green_agent.models.scope import ScopePrediction, ScopeUsage
from green_agent.scoping import prompt as scope_prompt
from green_agent.scoping.base import ScopePredictorError
from green_agent.scoping.cache import CacheEntry, PredictionCache, cache_key
from green_agent.scoping.parsing import parse_api_lines
from green_agent.scoping.pricing import approximate_cost_usd
from kernel.world_data import WorldData

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_RETRIES = 1
_NO_TEMPERATURE_PREFIXES = ("gpt-5", "o1", "o3", "o4")
_SECRET = re.compile(r"(sk-|Bearer\s+)[A-Za-z0-9_\-*.]{4,}")


def accepts_temperature(model: str) -> bool:
    """Reasoning models (gpt-5*, o-series) reject `temperature`; others get 0 for repeatability."""
    return not model.lower().startswith(_NO_TEMPERATURE_PREFIXES)


def redact(text: str) -> str:
    return _SECRET.sub(lambda m: m.group(1) + "***", text)


class LlmPredictor:
    """Few-shot API prediction with an OpenAI-compatible chat completions endpoint."""

    name = "llm"

    def __init__(self, world: WorldData, *, model: str, api_key: str | None, base_url: str | None = None,
                 cap: int = 20, cache: PredictionCache | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        self.world, self.model, self.cap, self.cache = world, model, cap, cache
        self._api_key, self._base_url = api_key, base_url
        self.timeout_s, self.max_retries = timeout_s, max_retries

    @cached_property
    def docs_yaml(self) -> str:
        return scope_prompt.descriptions_yaml(scope_prompt.api_descriptions(self.world))

    @cached_property
    def known(self) -> frozenset[str]:
        return frozenset(self.world.all_apis(skip_apps=scope_prompt.SKIP_APPS))

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        if not self._api_key:
            raise ScopePredictorError("OPENAI_API_KEY is not set")
        demos = scope_prompt.load_demonstrations(self.world, exclude_task_id=task_id)
        key = cache_key(instruction, self.model, scope_prompt.PROMPT_VERSION, scope_prompt.digest(self.docs_yaml),
                        scope_prompt.demonstrations_digest(demos))
        entry = self.cache.get(key) if self.cache else None
        if entry is not None:
            parsed = parse_api_lines(entry.raw_output, self.known, self.cap)
            if parsed.matched:
                return self._prediction(parsed.apis, ScopeUsage(), cached=True)
        messages = scope_prompt.build_messages(instruction, self.docs_yaml, demos, self.cap)
        text, usage = self._complete(messages)
        parsed = parse_api_lines(text, self.known, self.cap)
        if not parsed.matched:
            sample = "; ".join(parsed.rejected[:3]) or "<empty>"
            raise ScopePredictorError(f"model answer named no known API (first lines: {sample[:200]})")
        if self.cache is not None:
            self.cache.put(CacheEntry(key=key, model=self.model, prompt_version=scope_prompt.PROMPT_VERSION,
                                      raw_output=text, usage=usage))
        return self._prediction(parsed.apis, usage, cached=False)

    def _prediction(self, apis: list[str], usage: ScopeUsage, cached: bool) -> ScopePrediction:
        return ScopePrediction(predictor="llm", requested="llm", apis=apis, usage=usage, cached=cached,
                               model=self.model, prompt_version=scope_prompt.PROMPT_VERSION)

    def _complete(self, messages: list[dict[str, str]]) -> tuple[str, ScopeUsage]:
        import openai  # imported on use: it costs seconds, and most CLI commands never predict with an LLM

        client = openai.OpenAI(api_key=self._api_key, base_url=self._base_url, timeout=self.timeout_s,
                               max_retries=self.max_retries)
        kwargs: dict = {"model": self.model, "messages": messages}
        if accepts_temperature(self.model):
            kwargs["temperature"] = 0
        try:
            try:
                response = client.chat.completions.create(**kwargs)
            except openai.BadRequestError as exc:
                if "temperature" not in kwargs or "temperature" not in str(exc).lower():
                    raise
                kwargs.pop("temperature")
                response = client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise ScopePredictorError(f"timeout after {self.timeout_s:g}s calling {self.model}") from exc
        except openai.APIConnectionError as exc:
            raise ScopePredictorError(f"cannot reach the OpenAI endpoint ({type(exc).__name__})") from exc
        except openai.APIStatusError as exc:
            raise ScopePredictorError(f"OpenAI API error {exc.status_code}: {redact(str(exc))[:300]}") from exc
        except openai.OpenAIError as exc:
            raise ScopePredictorError(f"OpenAI client error: {redact(str(exc))[:300]}") from exc
        return _answer_text(response), _usage(self.model, response)


def _answer_text(response: object) -> str:
    choices = getattr(response, "choices", None) or []
    content = choices[0].message.content if choices else None
    if not content:
        raise ScopePredictorError("model returned no text (empty answer or refusal)")
    return content


def _usage(model: str, response: object) -> ScopeUsage:
    usage = getattr(response, "usage", None)
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
    return ScopeUsage(input_tokens=tokens_in, output_tokens=tokens_out,
                      cost_usd=approximate_cost_usd(model, tokens_in, tokens_out))
