"""Offline scoping: BM25 over the API docs, app cues, and the plumbing every task needs.

How a scope is built (no network, no gold data):
1. Apps: those the instruction points at (`vocabulary.APP_CUES`: names weigh 3, core objects 2);
   the phone app joins when people are named by relation (contacts hold relationships); with no cue
   at all, the app whose APIs score highest. `supervisor` is always a candidate app.
2. Every API of the candidate apps gets a BM25 score; each API is one document made of its name
   tokens (repeated `NAME_WEIGHT` times), its description and its parameter names. The query is the
   instruction's tokens plus `vocabulary.EXPANSIONS` (task phrasing -> API vocabulary).
3. The scope is: `supervisor.complete_task`, `supervisor.show_account_passwords`,
   `supervisor.show_profile`, the `login` of each chosen app (the phone clock when the instruction is
   about relative dates); then the APIs whose every name word the instruction asks for (e.g.
   `show_projects` for "project", `add_product_to_cart` for "add ... products ... cart"; the read
   verbs show/search/get count as always asked); then the rest by score, up to the cap.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from green_agent.models.scope import ScopePrediction
from green_agent.scoping import vocabulary as vocab
from green_agent.scoping.base import PLUMBING_APIS, complete_task_first
from kernel.world_data import ApiDoc, DocsVersion, WorldData, parse_api_docs

NAME_WEIGHT = 3
BM25_K1 = 1.2
BM25_B = 0.75
SKIP_APPS = ("api_docs",)
ACCOUNT_APIS = frozenset(
    "show_account signup delete_account update_account_name logout send_verification_code verify_account "
    "send_password_reset_code reset_password".split()
)
"""Account maintenance APIs: never part of a task's work unless named, so they rank last."""
LOW_PRIORITY_APIS = frozenset({"supervisor.show_active_task"})
"""The task message already carries the instruction, so re-reading it is rarely needed."""


@dataclass(frozen=True)
class ScoredApi:
    """One API and its relevance to the instruction."""

    api: str
    score: float


class Bm25Index:
    """BM25 over one document per API."""

    def __init__(self, docs: dict[str, list[str]]) -> None:
        self.docs = {api: Counter(toks) for api, toks in docs.items()}
        self.lengths = {api: len(toks) for api, toks in docs.items()}
        self.avg_len = sum(self.lengths.values()) / max(len(self.lengths), 1)
        df: Counter[str] = Counter()
        for counts in self.docs.values():
            df.update(counts.keys())
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def score(self, api: str, query: Counter[str]) -> float:
        counts, length, total = self.docs[api], self.lengths[api], 0.0
        for term, q_weight in query.items():
            tf = counts.get(term, 0)
            if tf:
                norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * length / self.avg_len)
                total += q_weight * self.idf[term] * tf * (BM25_K1 + 1) / norm
        return total


@lru_cache(maxsize=4)
def indexed_docs(docs_version: DocsVersion) -> tuple[dict[str, ApiDoc], Bm25Index]:
    """The APIs a scope may hold (`{app.api: ApiDoc}`) and their BM25 index, built once per docs version: every
    battle of a run scopes against the same docs, and building the index (tokenising and stemming 457 docs) was
    the scope step's largest cost. Read-only for the callers."""
    docs = {doc.dotted: doc for app, apis in parse_api_docs(docs_version).items() if app not in SKIP_APPS
            for doc in apis.values()}
    return docs, Bm25Index({api: api_document(doc) for api, doc in docs.items()})


def api_document(doc: ApiDoc) -> list[str]:
    """The tokens one API is indexed under."""
    name = vocab.tokens(doc.api_name, drop_stopwords=False) * NAME_WEIGHT
    params = [t for p in doc.parameters if p.get("name") not in ("access_token", "page_index", "page_limit")
              for t in vocab.tokens(str(p.get("name", "")))]
    return name + vocab.tokens(doc.description) + params


def query_terms(instruction: str) -> Counter[str]:
    """Instruction tokens plus their API-vocabulary expansions (half weight)."""
    words = vocab.tokens(instruction, drop_stopwords=False)
    raw = [w.lower() for w in instruction.replace("_", " ").split()]
    query: Counter[str] = Counter(t for t in vocab.tokens(instruction))
    for word in set(raw) | set(words):
        for extra in vocab.EXPANSIONS.get(word.strip(".,!?;:'\""), ()):
            query[vocab.stem(extra)] += 0.5
    return query


def app_cue_scores(instruction: str) -> dict[str, float]:
    """Cue weight per app: the strongest phrase of each app found in the instruction."""
    text = " " + " ".join(vocab.tokens(instruction, drop_stopwords=False)) + " "
    plain = " " + " ".join(instruction.lower().replace("-", " ").split()) + " "
    scores: dict[str, float] = {}
    for app, cues in vocab.APP_CUES.items():
        for phrase, weight in cues.items():
            stemmed = " " + " ".join(vocab.tokens(phrase, drop_stopwords=False)) + " "
            if f" {phrase.replace('-', ' ')} " in plain or stemmed in text:
                scores[app] = max(scores.get(app, 0.0), weight)
    return scores


class LexicalPredictor:
    """The offline predictor (see the module docstring for the rules)."""

    name = "lexical"

    def __init__(self, world: WorldData, cap: int = 20) -> None:
        self.cap = cap
        self.docs, self.index = indexed_docs(world.docs_version)

    def predict(self, task_id: str, instruction: str) -> ScopePrediction:
        """Scope one task; `task_id` is only recorded, never used to look anything up."""
        return ScopePrediction(predictor="lexical", requested="lexical", apis=self.choose(instruction))

    def choose(self, instruction: str) -> list[str]:
        apps = self.choose_apps(instruction)
        ranked = self.rank(instruction, apps | {"supervisor"})
        fixed = list(PLUMBING_APIS) + [f"{app}.login" for app in sorted(apps) if f"{app}.login" in self.docs]
        if vocab.CLOCK_API in self.docs and vocab.TEMPORAL_WORDS & set(instruction.lower().split()):
            fixed.append(vocab.CLOCK_API)
        query = query_terms(instruction)
        covered = [s.api for s in ranked if s.score > 0 and self.name_covered(s.api, query)]
        return complete_task_first(fixed + covered + [s.api for s in ranked if s.score > 0], self.cap)

    def name_covered(self, api: str, query: Counter[str]) -> bool:
        """True when every word of the API's name is asked for (read verbs count as always asked)."""
        doc = self.docs[api]
        if doc.api_name in ACCOUNT_APIS:
            return False
        words = [w for w in vocab.tokens(doc.api_name)]
        if words and words[0] in vocab.READ_VERBS:
            words = words[1:]
        return bool(words) and all(word in query for word in words)

    def choose_apps(self, instruction: str) -> set[str]:
        known = {doc.app_name for doc in self.docs.values()}
        cues = {app: w for app, w in app_cue_scores(instruction).items() if app in known}
        apps = {app for app, weight in cues.items() if weight >= vocab.APP_SELECT_THRESHOLD}
        if "phone" in known and vocab.RELATIONSHIP_WORDS & set(instruction.lower().replace(",", " ").split()):
            apps.add("phone")
        if not apps and cues:
            apps = {max(cues, key=lambda app: (cues[app], app))}
        if not apps:
            best = self.rank(instruction, known - {"supervisor"})
            apps = {best[0].api.split(".")[0]} if best else set()
        return apps

    @staticmethod
    def _verb_factor(api_name: str, query: Counter[str]) -> float:
        """Demote account upkeep, and actions (create/delete/like...) that the instruction does not ask for."""
        if api_name in ACCOUNT_APIS:
            return 0.1
        verb = api_name.split("_", 1)[0]
        if verb in vocab.READ_VERBS or vocab.stem(verb) in query:
            return 1.0
        return vocab.MUTATING_VERB_PENALTY

    def rank(self, instruction: str, apps: set[str]) -> list[ScoredApi]:
        """APIs of `apps` by descending score (account maintenance APIs last), ties in doc order."""
        query = query_terms(instruction)
        scored = []
        for position, (api, doc) in enumerate(self.docs.items()):
            if doc.app_name in apps:
                score = self.index.score(api, query)
                score *= self._verb_factor(doc.api_name, query) * (0.1 if api in LOW_PRIORITY_APIS else 1.0)
                scored.append((-score, position, ScoredApi(api, score)))
        return [item for _, _, item in sorted(scored)]
