"""The household UI in a real headless Chromium (Debian's), at tablet and phone sizes."""
