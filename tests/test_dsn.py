"""A database URL's options, read once into what asyncpg is given (app/dsn.py)."""

from __future__ import annotations

import pytest

from app.dsn import connect_options


def test_each_option_goes_where_the_driver_reads_it():
    target = connect_options(
        "postgres://u:p%40ss@db.example:5433/app?sslmode=verify-full&sslrootcert=/etc/ca.pem"
        "&application_name=bedtime&options=-c%20statement_timeout%3D5000&connect_timeout=3")
    assert target.address == "postgresql://u:p%40ss@db.example:5433/app"
    assert target.asyncpg_kwargs() == {
        "dsn": "postgresql://u:p%40ss@db.example:5433/app"
               "?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        "server_settings": {"application_name": "bedtime",
                            "options": "-c statement_timeout=5000"},
        "timeout": 3.0,
    }


def test_a_url_with_no_options_is_given_as_it_is():
    target = connect_options("postgresql://postgres:@/postgres?host=/run/pg")
    assert target.asyncpg_kwargs() == {"dsn": "postgresql://postgres:@/postgres?host=%2Frun%2Fpg"}


def test_the_fallback_name_is_the_name_unless_one_is_given():
    fallback = "postgresql://h/app?fallback_application_name=bedtime"
    assert connect_options(fallback).server_settings == {"application_name": "bedtime"}
    named = fallback + "&application_name=mine"
    assert connect_options(named).server_settings == {"application_name": "mine"}


@pytest.mark.parametrize(("ssl", "expected"), [("true", True), ("False", False),
                                                ("require", "require")])
def test_the_ssl_spelling_of_databases_still_works(ssl, expected):
    assert connect_options(f"postgresql://h/app?ssl={ssl}").asyncpg_kwargs()["ssl"] == expected


@pytest.mark.parametrize(("query", "said"), [
    ("applicaton_name=x", "does not know: applicaton_name"),
    ("max_size=5", "DATABASE_POOL_MAX"),
    ("search_path=app", "options=-c"),
    ("sslmode=on", "sslmode='on'"),
    ("ssl=maybe", "ssl='maybe'"),
    ("ssl=true&sslmode=require", "both ssl and sslmode"),
    ("connect_timeout=0", "connect_timeout='0'"),
    ("connect_timeout=soon", "connect_timeout='soon'"),
])
def test_an_option_the_driver_cannot_take_is_refused_in_one_line(query, said):
    with pytest.raises(ValueError, match="^has ") as refused:
        connect_options(f"postgresql://u:secret@h/app?{query}")
    assert said in str(refused.value) and "\n" not in str(refused.value)
    assert "secret" not in str(refused.value)
