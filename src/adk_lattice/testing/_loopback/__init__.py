"""Loopback model APIs for tests: a scripted Gemini API and an OpenAI-compatible one on
127.0.0.1, their shared HTTP server and wire formats."""
