"""The LLM layer: prompt assembly (cached prefix + ephemeral turn), the Anthropic client, usage.

Import ``agents.llm.client`` only where a model is called: it pulls in the anthropic SDK
(seconds of import time); the prompt and usage modules are light.
"""
