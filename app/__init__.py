"""Bedtime Stories: a household web app that writes bedtime stories with an LLM."""
