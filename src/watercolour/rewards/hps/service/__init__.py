"""The HPSv3 scoring service (``app.py``): self-contained, run in its own environment with
``start.sh``, or as a Hugging Face Space from the ``Dockerfile``."""
