"""The dynamic workflow tool."""
