"""Renderers: read a Report and write it as text, HTML or graph files; they derive no facts."""
