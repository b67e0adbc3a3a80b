"""What shapes the prompts beyond the agent's own: per-agent context, condensers, the View."""

from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.condenser import (
    CondenserBase,
    LLMSummarizingCondenser,
    NoCondensationAvailableException,
    NoOpCondenser,
    PipelineCondenser,
    RollingCondenser,
)
from ohtui.sdk.context.memory import load_memory
from ohtui.sdk.context.skills.loader import (
    load_project_skills,
    load_skills_from_dir,
    load_user_skills,
)
from ohtui.sdk.context.skills.skill import KeywordTrigger, Skill, SkillError
from ohtui.sdk.context.view import View

__all__ = [
    "AgentContext",
    "CondenserBase",
    "KeywordTrigger",
    "LLMSummarizingCondenser",
    "NoCondensationAvailableException",
    "NoOpCondenser",
    "PipelineCondenser",
    "RollingCondenser",
    "Skill",
    "SkillError",
    "View",
    "load_memory",
    "load_project_skills",
    "load_skills_from_dir",
    "load_user_skills",
]
