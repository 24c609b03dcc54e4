"""Widgets shared by the panels."""
