"""Paraphrases of a world's tasks: the validity gate (`gate`), how a text's facts are read (`facts`), and the
LLM generation behind `appworld-green paraphrase` (`generate`). The set's file format is `kernel.paraphrase_set`."""
