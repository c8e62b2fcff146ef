"""The report header's standard-or-custom line and provenance line (`report.html`), from `results.json`'s record.

`provenance_html(results)` gives `<p id="standard">` (standard, or custom with each difference) and
`<p id="provenance">` (AppWorld, world digest, task pack, grader, interaction, sandbox, image, and the command
that re-judges the run). Every value goes through `kernel.untrusted.html_text`.
"""

from __future__ import annotations

from green_agent.batch.standard import standard_sentence
from green_agent.models.eval_run import EvalResults
from kernel.untrusted import html_text


def provenance_words(results: EvalResults) -> str | None:
    """The provenance in one line, or None for a results.json written before it existed."""
    p = results.provenance
    if p is None:
        return None
    parts = [f"AppWorld {p.appworld or 'unknown'}", f"world {(p.world_digest or 'unknown')[:12]}",
             f"task pack {(p.task_pack or 'none')[:12]}",
             f"grader appworld-green {p.grader.appworld_green}, outcome rule v{p.grader.outcome_rule}",
             f"interaction {p.interaction}", f"task set: {p.task_set}"]
    if p.sandbox:
        parts.append(f"sandbox: {p.sandbox}")
    parts.append(f"image {p.image_digest}" if p.image_digest else "not in our image")
    if p.rejudge_command:
        parts.append(f"verify: {p.rejudge_command}")
    return " · ".join(parts)


def provenance_html(results: EvalResults) -> str:
    kind = "standard" if results.standard else "custom"
    html = (f'<p class="meta" id="standard" data-standard="{kind}"><b>'
            f'{html_text(standard_sentence(results.standard, results.custom))}</b></p>')
    words = provenance_words(results)
    if words:
        html += f'<p class="meta" id="provenance">{html_text(words)}</p>'
    return html
