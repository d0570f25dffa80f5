"""``python -m ctxneo``: the command line, for MCP client configs that name an interpreter."""

from ctxneo.cli import main

main()
