"""The panels: web pages the panel agents serve (server.py is the shared web server)."""
