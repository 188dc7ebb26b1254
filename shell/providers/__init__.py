"""Model providers: one HTTP client with one error mapping, and the APIs turnmark speaks
(Anthropic, OpenAI-compatible, Ollama, llama.cpp). Bodies and answers are built and read in ``core.wire``.
"""
