"""Marketplaces: `.plugin/marketplace.json` listings of plugins and skills, by their sources."""

from ohtui.sdk.marketplace.types import (
    MARKETPLACE_MANIFEST_DIRS,
    MARKETPLACE_MANIFEST_FILE,
    Marketplace,
    MarketplaceAuthor,
    MarketplaceEntry,
    MarketplaceError,
    MarketplaceMetadata,
    MarketplaceOwner,
    MarketplacePluginEntry,
    MarketplacePluginSource,
)

__all__ = [
    "MARKETPLACE_MANIFEST_DIRS",
    "MARKETPLACE_MANIFEST_FILE",
    "Marketplace",
    "MarketplaceAuthor",
    "MarketplaceEntry",
    "MarketplaceError",
    "MarketplaceMetadata",
    "MarketplaceOwner",
    "MarketplacePluginEntry",
    "MarketplacePluginSource",
]
