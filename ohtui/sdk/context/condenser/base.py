"""CondenserBase and RollingCondenser: what a condenser is, and the usual way to build one."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from enum import Enum

from pydantic import ConfigDict

from ohtui.sdk.context.view import View
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

logger = logging.getLogger(__name__)


class CondenserBase(DiscriminatedUnionMixin, ABC):
    """Turns the view of a history into a smaller one, or into a `Condensation` to record.

    When `condense` returns a Condensation, the agent records it instead of calling the
    model; replaying the log then gives the condensed view. `agent_llm` is the agent's
    model, for counting tokens against its window. A condenser never changes the view
    it is given.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    @abstractmethod
    def condense(self, view: View, agent_llm: LLM | None = None) -> View | Condensation:
        """A (possibly smaller) view to send, or a Condensation to record."""

    def handles_condensation_requests(self) -> bool:
        """Whether a `CondensationRequest` (`conversation.condense()`, or a context-window
        error) makes this condenser condense at once."""
        return False


class PipelinableCondenserBase(CondenserBase, ABC):
    """A condenser that may sit in a PipelineCondenser (which cannot nest another)."""


class NoCondensationAvailableException(Exception):  # noqa: N818 - the SDK's name
    """A condensation was wanted but none can be made now (too little to forget, or the
    summarizing call failed)."""


class CondensationRequirement(Enum):
    """How badly a rolling condenser needs to condense."""

    HARD = "hard"
    """Now: the next request cannot be sent as it is (a request, or too many tokens)."""
    SOFT = "soft"
    """When possible: a size threshold was passed but the history still fits."""


class RollingCondenser(PipelinableCondenserBase, ABC):
    """Condenses a rolling history: when `condensation_requirement` says so, returns the
    `Condensation` of `get_condensation`, else the view unchanged.

    When no condensation is available, a SOFT requirement sends the view as it is; a HARD
    one tries `hard_context_reset` and otherwise raises.
    """

    @abstractmethod
    def condensation_requirement(
        self, view: View, agent_llm: LLM | None = None
    ) -> CondensationRequirement | None:
        """Whether, and how badly, `view` needs condensing (None: not at all)."""

    @abstractmethod
    def get_condensation(self, view: View, agent_llm: LLM | None = None) -> Condensation:
        """The condensation of `view`; NoCondensationAvailableException when there is none."""

    def hard_context_reset(self, view: View, agent_llm: LLM | None = None) -> Condensation | None:
        """A last-resort condensation when a HARD requirement finds none (None: unsupported)."""
        return None

    def condense(self, view: View, agent_llm: LLM | None = None) -> View | Condensation:
        """The condensation when one is required and available, else `view`."""
        requirement = self.condensation_requirement(view, agent_llm=agent_llm)
        if requirement is None:
            return view
        try:
            return self.get_condensation(view, agent_llm=agent_llm)
        except NoCondensationAvailableException as exc:
            logger.debug("no condensation available: %s", exc)
            if requirement is CondensationRequirement.SOFT:
                return view
            try:
                reset = self.hard_context_reset(view, agent_llm=agent_llm)
            except Exception as reset_error:
                raise reset_error from exc
            if reset is not None:
                return reset
            raise
