"""Which lineage direction a question asks for (canon/ask/understanding/parse.py): what is
built from a thing ("which models depend on X", "what uses X", "what breaks if X changes") is
`downstream`, beside `lineage`; what a thing reads ("which sources does X use", "what is X
built on") is upstream; a verb inside a description ("the share of users who use …") asks
neither. The graph itself is walked on a real dbt project in tests/test_team_project.py."""

from __future__ import annotations

import pytest

from canon.ask.understanding.parse import detect_intents


@pytest.mark.parametrize("question", [
    "Which models depend on stg_claims?", "What uses stg_claims?", "What is downstream of stg_claims?",
    "What breaks if stg_claims changes?", "What is built on stg_claims?", "Which dashboards rely on stg_claims?",
    "Who uses the claims model?", "Show me the dependents of stg_claims",
])
def test_what_is_built_from_a_thing_is_downstream(question):
    assert {"downstream", "lineage"} <= detect_intents(question)


@pytest.mark.parametrize("question", [
    "Which sources does stg_claims use?", "What is stg_claims built on?", "Which tables feed stg_claims?",
    "Where does stg_claims get its data from?",
])
def test_what_a_thing_reads_is_upstream(question):
    intents = detect_intents(question)
    assert "lineage" in intents and "downstream" not in intents


def test_a_verb_inside_a_description_asks_no_direction():
    assert "downstream" not in detect_intents("What is the share of policy holders who use the mobile app?")
    assert "downstream" not in detect_intents("How many claims use the fast-track process?")


def test_a_supposed_change_is_no_comparison_of_revisions():
    """"What breaks if X changes" supposes a change to ask what is built from X; "what changed
    in X" asks what changed between its revisions."""
    from canon.ask.understanding.temporal import is_comparison
    assert not is_comparison("what breaks if stg claims changes", ())
    assert not is_comparison("which reports are affected when the stg claims model changes", ())
    assert is_comparison("what changed in the stg claims definition", ())
    assert is_comparison("how has stg claims changed", ())
