"""Pure text helpers shared by the engine and memory (no app imports)."""
