"""Command analysis: the bypass corpus against the rules, risk ratings, and the cost.

    python bench/shell_analysis.py

Prints how many tries in tests/sdk/security/shell_corpus.py get past an allow rule or a
deny rule (and, with bubblewrap, how many of them really run other code or `rm`), how
the dangerous commands are rated when the model says LOW, and how long 1 MB lines take.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "sdk" / "security")]

from shell_corpus import ALLOW_BYPASSES, ALLOW_RULES, ALLOWED, DANGEROUS, DENY_DODGES  # noqa: E402

from ohtui.sdk import (  # noqa: E402
    ActionEvent,
    AlwaysConfirm,
    ApprovalRule,
    ApprovalRulesPolicy,
    ConfirmRisky,
    EnsembleSecurityAnalyzer,
    LLMSecurityAnalyzer,
    MessageToolCall,
    NeverConfirm,
    PatternSecurityAnalyzer,
    SecurityRisk,
)
from ohtui.sdk.security.shell.reader import read_command_line  # noqa: E402
from ohtui.sdk.tools.terminal import TerminalAction  # noqa: E402

WS = "/work/project"


def action(command: str, risk: SecurityRisk = SecurityRisk.LOW) -> ActionEvent:
    return ActionEvent(
        action=TerminalAction(command=command),
        tool_name="terminal",
        tool_call_id="c",
        tool_call=MessageToolCall(id="c", name="terminal", arguments="{}"),
        llm_response_id="r",
        security_risk=risk,
    )


def main() -> None:
    allows = [ApprovalRule(tool="terminal", command_prefix=p) for p in ALLOW_RULES]
    allow_policy = ApprovalRulesPolicy(rules=allows, fallback=AlwaysConfirm())
    deny_policy = ApprovalRulesPolicy(
        rules=[*allows, ApprovalRule(tool="terminal", command_prefix="rm", decision="deny")],
        fallback=NeverConfirm(),
    )
    through = [c for c in ALLOW_BYPASSES if allow_policy.decide(action(c), WS).verdict == "allow"]
    dodged = [c for c in DENY_DODGES if deny_policy.decide(action(c), WS).verdict != "deny"]
    refused = [c for c in ALLOWED if allow_policy.decide(action(c), WS).verdict != "allow"]
    print(
        f"allow rules ({len(ALLOW_RULES)}): {len(through)} of {len(ALLOW_BYPASSES)} tries got past"
    )
    print(f"deny rule on rm: {len(dodged)} of {len(DENY_DODGES)} tries dodged it")
    print(f"plain commands still allowed: {len(ALLOWED) - len(refused)} of {len(ALLOWED)}")
    for command in through + dodged + refused:
        print("   ", repr(command))
    _ground_truth()

    analyzer = EnsembleSecurityAnalyzer(
        analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer(workspace=WS)]
    )
    risky = ConfirmRisky(threshold=SecurityRisk.MEDIUM)
    ratings = {c: analyzer.assess(action(c)).risk for c in DANGEROUS}
    asks = [c for c, r in ratings.items() if risky.should_confirm(r)]
    counts = {r.value: list(ratings.values()).count(r) for r in SecurityRisk}
    print(
        f"dangerous commands, model says LOW: {len(DANGEROUS)} rated {counts}; "
        f"{len(asks)} ask under `risky`"
    )

    cases = {
        "1 MB heredoc (40k lines of code)": "cat > big.py <<'EOF'\n"
        + "print('hello; world') # x\n" * 40_000
        + "EOF\n",
        "1 MB argument": "echo " + "a" * 1_000_000,
        "1 MB of `ls; ` (250k commands)": "ls; " * 250_000,
        "1 MB of quoted expansions": 'echo "' + "abc $x " * 140_000 + '"',
    }
    read_command_line("ls")  # load the grammar
    for name, command in cases.items():
        times = []
        for _ in range(5):
            started = time.perf_counter()
            line = read_command_line(command)
            times.append(time.perf_counter() - started)
        verdict = "fails closed" if line.open_ended else f"{len(line.commands)} command(s)"
        print(
            f"{name}: median {statistics.median(times) * 1000:.1f} ms, max "
            f"{max(times) * 1000:.1f} ms ({verdict})"
        )
    typical = "cd src && grep -rn TODO . | head -20; git status --short"
    started = time.perf_counter()
    for _ in range(1000):
        read_command_line(typical)
    print(f"a typical line: {(time.perf_counter() - started) * 1000:.3f} ms per 1,000 reads")


def _ground_truth() -> None:
    try:
        from sandboxed_bash import Sandbox
    except ImportError:
        return
    import pytest

    try:
        sandbox = Sandbox(Path(tempfile.mkdtemp()))
    except (pytest.skip.Exception, pytest.fail.Exception):
        print("(bubblewrap not available: no ground truth)")
        return
    ran = sum(1 for c in ALLOW_BYPASSES if sandbox.run(c).changed)
    rm = sum(1 for c in DENY_DODGES if any(r.startswith("rm ") for r in sandbox.run(c).recorded))
    print(f"in bubblewrap: {ran} of the allow tries ran other code, {rm} of the deny tries ran rm")


if __name__ == "__main__":
    main()
