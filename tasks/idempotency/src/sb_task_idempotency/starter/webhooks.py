"""Exactly-once processing of payment webhooks, backed by SQLite."""
import sqlite3


class WebhookHandler:
    def __init__(self, db_path, fulfil):
        raise NotImplementedError

    def handle(self, event):
        raise NotImplementedError

    def status(self, payment_id):
        raise NotImplementedError
