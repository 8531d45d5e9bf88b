"""Reading labelled texts: files, folders and hub datasets; token lengths; maxlen."""
