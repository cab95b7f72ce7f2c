"""The book as a pipeline: run the chapters once, build the HTML from them, check the pages."""
