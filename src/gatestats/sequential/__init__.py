"""Anytime-valid (sequential) decisions: confidence sequences and e-processes for bounded means.

- :mod:`~gatestats.sequential.design`: the policy's ``[sequential]`` table
  (:class:`SequentialDesign`, :func:`parse_sequential_table`).
- :mod:`~gatestats.sequential.decide`: the decision of one rule from case-level values in arrival
  order (:func:`decide_rule`, :func:`split_alpha`).
- :mod:`~gatestats.sequential.confseq`: predictable plug-in Hoeffding and empirical-Bernstein
  sequences and the betting e-process (Waudby-Smith & Ramdas 2024).
- :mod:`~gatestats.sequential.eprocess`: the beta-binomial mixture Bernoulli sequence (Howard et al.
  2021) and the paired discordant e-process.
- :mod:`~gatestats.sequential.monitor`: the rollback triggers of a rollout (issue 25): a rate, a
  bounded mean or a count against a level (:func:`rate_trigger`, :func:`mean_trigger`,
  :func:`count_trigger`, :class:`TriggerPath`; :func:`cost_per_accepted_values` for the CPA).
- :mod:`~gatestats.sequential.compare_layers`: does production look like the golden set
  (:func:`layer_comparison`, Newcombe 1998).

See docs/sequential.md ("Statistics") for the conventions, the type-I simulation and the savings.

The home of sequential work, one module per layer (docs/architecture.md, "Where sequential work
lives"): the statistics here (they import no gate, record or runner module, tested); the controller
that runs batches until the gate decides in :mod:`gatestats.sequential.run` (above the gate; this
package's ``__init__`` never imports it); the gate's sequential rules in
``gate/sequential_rules.py`` and their words in ``gate/sequential_summary.py`` (beside the gate's
other rule kinds); the report's section in ``report/_release_sequential.py``; the command in
``cli/_sequential_run.py``.

The names are imported on first use (PEP 562): :mod:`gatestats.gate.bindings` imports
:mod:`~gatestats.sequential.decide` without the monitor, the e-processes or scipy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.sequential.compare_layers import LayerComparison, LayerDecision, layer_comparison
    from gatestats.sequential.confseq import ConfidenceSequence, confidence_sequence, log_eprocess
    from gatestats.sequential.decide import (
        SequencePoint,
        SequentialDecision,
        SequentialStatus,
        decide_rule,
        split_alpha,
    )
    from gatestats.sequential.design import (
        SEQUENTIAL_METHODS,
        SequentialDesign,
        SequentialMethod,
        parse_sequential_table,
        sequential_problems,
    )
    from gatestats.sequential.eprocess import (
        BernoulliConfidenceSequence,
        DiscordantEProcess,
        bernoulli_confidence_sequence,
        discordant_eprocess,
    )
    from gatestats.sequential.monitor import (
        CostReduction,
        TriggerDirection,
        TriggerKind,
        TriggerPath,
        cost_per_accepted_values,
        count_trigger,
        mean_trigger,
        one_sided_log_mixture,
        one_sided_log_mixture_reaches,
        rate_trigger,
        vs_reference_level,
    )

__all__ = [
    "SEQUENTIAL_METHODS",
    "BernoulliConfidenceSequence",
    "ConfidenceSequence",
    "CostReduction",
    "DiscordantEProcess",
    "LayerComparison",
    "LayerDecision",
    "SequencePoint",
    "SequentialDecision",
    "SequentialDesign",
    "SequentialMethod",
    "SequentialStatus",
    "TriggerDirection",
    "TriggerKind",
    "TriggerPath",
    "bernoulli_confidence_sequence",
    "confidence_sequence",
    "cost_per_accepted_values",
    "count_trigger",
    "decide_rule",
    "discordant_eprocess",
    "layer_comparison",
    "log_eprocess",
    "mean_trigger",
    "one_sided_log_mixture",
    "one_sided_log_mixture_reaches",
    "parse_sequential_table",
    "rate_trigger",
    "sequential_problems",
    "split_alpha",
    "vs_reference_level",
]
#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("LayerComparison", "LayerDecision", "layer_comparison"), "compare_layers"),
    **dict.fromkeys(("ConfidenceSequence", "confidence_sequence", "log_eprocess"), "confseq"),
    **dict.fromkeys(
        ("SequencePoint", "SequentialDecision", "SequentialStatus", "decide_rule", "split_alpha"), "decide"
    ),
    **dict.fromkeys(
        ("SEQUENTIAL_METHODS", "SequentialDesign", "SequentialMethod", "parse_sequential_table", "sequential_problems"),
        "design",
    ),
    **dict.fromkeys(
        ("BernoulliConfidenceSequence", "DiscordantEProcess", "bernoulli_confidence_sequence", "discordant_eprocess"),
        "eprocess",
    ),
    **dict.fromkeys(
        (
            "CostReduction",
            "TriggerDirection",
            "TriggerKind",
            "TriggerPath",
            "cost_per_accepted_values",
            "count_trigger",
            "mean_trigger",
            "one_sided_log_mixture",
            "one_sided_log_mixture_reaches",
            "rate_trigger",
            "vs_reference_level",
        ),
        "monitor",
    ),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
