"""The front matter of a MyST text notebook, for chapters the tests write themselves."""

import textwrap

MYST_HEADER = textwrap.dedent("""\
    ---
    jupytext:
      text_representation:
        format_name: myst
    kernelspec:
      display_name: Python 3
      language: python
      name: python3
    ---
    """)
