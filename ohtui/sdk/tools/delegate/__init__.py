"""The delegate tool and the visualizer of conversations in which agents delegate."""

from ohtui.sdk.tools.delegate.definition import DelegateAction, DelegateObservation, DelegateTool
from ohtui.sdk.tools.delegate.impl import ConfirmationHandler, DelegateExecutor
from ohtui.sdk.tools.delegate.visualizer import DelegationVisualizer

__all__ = [
    "ConfirmationHandler",
    "DelegateAction",
    "DelegateExecutor",
    "DelegateObservation",
    "DelegateTool",
    "DelegationVisualizer",
]
