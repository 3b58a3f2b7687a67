"""The session layer: routing a key to its session, lifecycle rules (daily/idle resets), the turn runner."""
