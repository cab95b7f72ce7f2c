"""What a reader's notebook runs before its chapter, below the book and the notebook helpers
that call it: installing the extras the chapter needs (:mod:`~watercolour.reader.install`) and
quieting library warnings that say nothing to a reader (:mod:`~watercolour.reader.quiet`).
Imports nothing else of the package: it runs before the package's dependencies are."""
