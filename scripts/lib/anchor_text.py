"""The anchor's state text, for `scripts/bench dom`: what browser-use 0.3.2 shows its model of a page.

Runs browser-use's own Python from the wheel the bench downloads (never committed): its
`DomService._construct_dom_tree` turns a buildDomTree.js result into its element tree, and
`DOMElementNode.clickable_elements_to_string` writes the text, with the attributes its `Agent`
includes by default, cut at its 40,000 characters and framed with its start/end-of-page or
scroll lines as `AgentMessagePrompt` does.

Usage: python3 anchor_text.py WHEEL_DIR < lines, one JSON object per line:
  {"result": <buildDomTree.js result>, "pixels_above": N, "pixels_below": N}
Writes one JSON line per input: {"chars": N, "text": "..."} or {"error": "..."}.

The package's __init__ starts the whole library (browsers, LLM clients); only the DOM modules
are needed, so `browser_use` is made an empty package over the wheel's folder and its
submodules are imported from there.
"""

import asyncio
import json
import sys
import types


def load(wheel_dir):
    package = types.ModuleType("browser_use")
    package.__path__ = [f"{wheel_dir}/browser_use"]
    sys.modules["browser_use"] = package
    import logging

    logging.disable(logging.CRITICAL)  # its timing decorators log at debug level
    from browser_use.dom.service import DomService

    return DomService


# browser_use/agent/service.py, Agent.__init__: the attributes a default agent shows.
DEFAULT_ATTRIBUTES = [
    "title",
    "type",
    "name",
    "role",
    "aria-label",
    "placeholder",
    "value",
    "alt",
    "aria-expanded",
    "data-date-format",
    "checked",
    "data-state",
    "aria-checked",
]
# browser_use/agent/prompts.py, AgentMessagePrompt: max_clickable_elements_length.
MAX_CHARS = 40000


def framed(text, above, below):
    """As AgentMessagePrompt._get_browser_state_description frames the element text."""
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS]
    if text == "":
        return "empty page"
    hint = "scroll to see more or extract structured data if you are looking for specific information"
    text = f"... {above} pixels above - {hint} ...\n{text}" if above > 0 else f"[Start of page]\n{text}"
    return f"{text}\n... {below} pixels below - {hint} ..." if below > 0 else f"{text}\n[End of page]"


def main():
    dom_service = load(sys.argv[1])
    service = dom_service.__new__(dom_service)  # no page: only the tree building is used
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            tree, _ = asyncio.run(service._construct_dom_tree(request["result"]))
            text = framed(
                tree.clickable_elements_to_string(include_attributes=DEFAULT_ATTRIBUTES),
                request.get("pixels_above", 0),
                request.get("pixels_below", 0),
            )
            reply = {"chars": len(text), "text": text}
        except Exception as error:  # a page the anchor cannot handle is reported, not fatal
            reply = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
