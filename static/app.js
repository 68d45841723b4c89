/* Enhancements live here; the app works without them. */
