"""What the chapters call: one module per chapter holds its plumbing (building result JSON,
starting a server, formatting tables), so a chapter's cells show the subject being taught."""
