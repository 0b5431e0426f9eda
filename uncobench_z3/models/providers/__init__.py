"""Provider adapters: each translates between this package's types and one SDK.

The modules that import an SDK (``_anthropic``, ``_openai``) are loaded only when their
provider is first used; see :mod:`uncobench_z3.models._registry`.
"""
