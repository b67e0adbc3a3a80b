"""What the goal loop says: to the judge, and to the agent when the goal is not done."""

from typing import Final

JUDGE_PROMPT: Final[str] = """An AI software agent was given the objective below. Decide \
whether it is COMPLETE, judging only by evidence in the transcript.

<objective>
{objective}
</objective>

List for yourself what the objective requires. Count a requirement as met only where the \
transcript shows it met: a file's contents, a command's output, a test run. A claim \
without such evidence does not count.

<transcript>
{transcript}
</transcript>

Answer with JSON alone, exactly in this shape:
{{"score": <0.0 to 1.0: how likely the whole objective is provably done>, \
"complete": <true or false>, "missing": "<what is still missing, briefly; empty when \
complete>"}}"""

FOLLOWUP_PROMPT: Final[str] = """The goal is not complete yet (audit round {iteration}).
Still missing: {missing}

Look at the workspace as it is now rather than as you remember it. Make progress on \
each missing requirement and show it: run the commands or tests that prove it. The \
objective is unchanged; finish only when every requirement is shown to be met."""

RESUME_PROMPT: Final[str] = """This goal was paused or interrupted and now resumes. \
Look at the workspace as it is now, carry on towards the objective, and finish only \
when every requirement is shown to be met."""
