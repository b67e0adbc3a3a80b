"""ApprovalRuleStore: the approval rules that outlive a conversation (scopes user and workspace).

Session-scoped rules live in the conversation itself. Rules of scope user live in
config.toml ([confirmation] rules) when a profile is given; workspace rules (and user rules
without a profile) live in one JSON file in the user's data directory, written atomically.
A damaged file is set aside (never overwritten) and the store starts empty, saying where
the old one went.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ohtui.settings.choices import RuleScope

if TYPE_CHECKING:
    from ohtui.sdk.security import ApprovalRule


class UserRules(Protocol):
    """Where rules of scope user are kept (the profile: config.toml)."""

    def user_rules(self) -> list[ApprovalRule]:
        """The rules, read now."""
        ...

    def set_user_rules(self, rules: list[ApprovalRule]) -> None:
        """Replace the rules."""
        ...


logger = logging.getLogger(__name__)

LASTING_SCOPES = tuple(scope for scope in RuleScope if scope.lasting)


class ApprovalRuleStore:
    """Rules of scope "user" (everywhere) and "workspace" (one workspace), kept on disk."""

    def __init__(self, path: Path, user_rules: UserRules | None = None) -> None:
        self.path = path
        self.user = user_rules
        self._lock = threading.Lock()
        self.problem: str | None = None
        """Set when the file was damaged and set aside: what happened, for the user."""

    def _read(self) -> list[ApprovalRule]:
        from pydantic import ValidationError

        from ohtui.sdk.security import ApprovalRule

        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = f"Cannot read {self.path}: {exc.strerror}. Saved rules are not applied."
            return []
        try:
            data = json.loads(text)
            return [ApprovalRule.model_validate(item) for item in data.get("rules", [])]
        except (ValueError, AttributeError, TypeError, ValidationError) as exc:
            aside = self.path.with_name(f"{self.path.name}.damaged-{int(time.time())}")
            try:
                self.path.replace(aside)
            except OSError:
                aside = self.path
            self.problem = (
                f"The approval rules file {self.path} is damaged ({_first_line(exc)}); it was "
                f"moved to {aside} and no saved rule is applied. Add your rules again."
            )
            logger.warning(self.problem)
            return []

    def _write(self, rules: list[ApprovalRule]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"rules": [r.model_dump(mode="json") for r in rules]}, indent=2)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".rules-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(payload)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def rules_for(self, workspace: str) -> list[ApprovalRule]:
        """The user's rules and this workspace's rules."""
        with self._lock:
            saved = [
                r
                for r in self._read()
                if (r.scope == RuleScope.USER and self.user is None)
                or (r.scope == RuleScope.WORKSPACE and r.workspace == workspace)
            ]
        return saved if self.user is None else [*self.user.user_rules(), *saved]

    def add(self, rule: ApprovalRule) -> None:
        """Save a lasting rule (replacing one with the same id)."""
        if rule.scope not in LASTING_SCOPES:
            return
        if rule.scope == RuleScope.USER and self.user is not None:
            kept = [r for r in self.user.user_rules() if r.id != rule.id]
            self.user.set_user_rules([*kept, rule])
            return
        with self._lock:
            rules = [r for r in self._read() if r.id != rule.id]
            self._write([*rules, rule])

    def remove(self, rule_ids: list[str]) -> None:
        """Forget lasting rules by id (unknown ids are ignored)."""
        if self.user is not None:
            user = self.user.user_rules()
            kept = [r for r in user if r.id not in rule_ids]
            if len(kept) != len(user):
                self.user.set_user_rules(kept)
        with self._lock:
            rules = self._read()
            kept = [r for r in rules if r.id not in rule_ids]
            if len(kept) != len(rules):
                self._write(kept)


def _first_line(exc: Exception) -> str:
    """What went wrong, in the error's own words (not its class name)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else "it cannot be read"
