"""A failure explains itself: an unexpected exception leaves one ERROR line, followed by its
traceback, where it was caught; an expected refusal stays one line."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from starlette.requests import Request
from starlette.routing import Route

from app.logs import causes
from tests.helpers.app import ACCEPT_JSON, post_story, serve, wait_for_job
from tests.helpers.waits import HTTP_TIMEOUT_S

pytestmark = pytest.mark.anyio

TRACEBACK = "Traceback (most recent call last)"


def errors_in(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bedtime" and r.levelno >= logging.ERROR]


async def test_an_unexpected_exception_in_a_request_handler_logs_one_error_with_its_traceback(
    make_app, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")

    async def defective(request: Request):
        raise RuntimeError("a defect in a handler")

    app = make_app()
    app.router.routes.append(Route("/defective", defective))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000),
                                        raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            answer = await http.get("/defective", headers=ACCEPT_JSON)
    assert answer.status_code == 500 and answer.json()["error"]["code"] == "internal_error"
    assert TRACEBACK not in answer.text  # never shown to the family
    [error] = errors_in(caplog)
    assert "event=unexpected_error path=/defective" in error.getMessage()
    assert error.exc_info is not None and error.exc_info[0] is RuntimeError
    assert TRACEBACK in caplog.text and 'RuntimeError("a defect in a handler")' in caplog.text


async def test_an_unexpected_exception_in_the_worker_logs_one_error_with_its_traceback(
    make_app, fake_llm, caplog
):
    caplog.set_level(logging.INFO, logger="bedtime")
    fake_llm.null_deltas = True  # following the story raises TypeError
    async with serve(make_app(llm_api="responses")) as client:
        job_id = (await post_story(client)).json()["job_id"]
        job = await wait_for_job(client, job_id)
    assert job["status"] == "failed"
    [error] = errors_in(caplog)
    assert f"event=job_failed job_id={job_id}" in error.getMessage()
    assert error.exc_info is not None and error.exc_info[0] is TypeError
    assert TRACEBACK in caplog.text


def test_an_expected_fault_is_one_line_and_anything_else_carries_its_traceback(caplog):
    from app.logs import log, log_caught

    caplog.set_level(logging.INFO, logger="bedtime")
    for error in (ConnectionResetError("the database went away"), KeyError("a defect")):
        try:
            raise error
        except Exception as caught:
            log_caught("sweep_failed", caught, expected=(OSError,))
    outage, defect = caplog.records
    assert (outage.levelno, outage.exc_info) == (logging.WARNING, None)
    assert defect.levelno == logging.ERROR and defect.exc_info[0] is KeyError
    log("plain", level=logging.WARNING, job_id=1)
    assert caplog.records[-1].exc_info is None


async def test_under_uvicorn_an_unexpected_exception_is_logged_once_not_again_by_the_server(
    make_app, caplog
):
    """Starlette raises the exception again after the 500 handler answered, so that servers
    can log it; uvicorn would log the same traceback a second time."""
    import uvicorn

    from tests.helpers.fake_llm import free_port

    caplog.set_level(logging.INFO)

    async def defective(request: Request):
        raise RuntimeError("a defect under a real server")

    app = make_app()
    app.router.routes.append(Route("/defective", defective))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.05)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                     timeout=HTTP_TIMEOUT_S) as http:
            answer = await http.get("/defective", headers=ACCEPT_JSON)
    finally:
        server.should_exit = True
        await task
    assert answer.status_code == 500 and answer.json()["error"]["code"] == "internal_error"
    with_traceback = [r for r in caplog.records if r.exc_info is not None]
    assert [(r.name, r.exc_info[0]) for r in with_traceback] == [("bedtime", RuntimeError)]
    assert caplog.text.count("Traceback (most recent call last)") == 1


def test_a_failure_s_detail_names_what_caused_it():
    try:
        try:
            raise ConnectionResetError("peer gone")
        except ConnectionResetError as reset:
            raise RuntimeError("Connection error.") from reset
    except RuntimeError as error:
        detail = causes(error)
    assert detail == "RuntimeError('Connection error.') <- ConnectionResetError('peer gone')"
    assert causes(ValueError("alone")) == "ValueError('alone')"


async def test_the_server_logs_every_request_but_an_answered_poll(database_url, fake_llm,
                                                                   tmp_path):
    """An open page polls every 3 s: under uvicorn, as the Procfile runs the app, those
    answers leave no line, while a refused poll and every other request keep theirs."""
    from tests.helpers.processes import AppProcess, submit

    app = AppProcess(database_url, fake_llm.url, tmp_path / "app.log")
    await app.start()
    try:
        async with httpx.AsyncClient(base_url=app.url, timeout=HTTP_TIMEOUT_S) as client:
            job_id, = await submit(client, 1, run=0)
            for headers in (ACCEPT_JSON, {"HX-Request": "true"}):
                assert (await client.get(f"/stories/jobs/{job_id}", headers=headers)
                        ).status_code == 200
            assert (await client.get("/closed")).status_code == 200
            assert (await client.get("/stories/jobs/999999", headers=ACCEPT_JSON)
                    ).status_code == 404
            assert (await client.get("/stories", headers={"Accept": "text/html"})
                    ).status_code == 200
    finally:
        app.stop()
    requests = [line.split('"')[1] for line in app.log_path.read_text().splitlines()
                if "HTTP/1.1" in line and "/healthz" not in line]  # start-up's checks aside
    assert requests == ["POST /stories/generate HTTP/1.1",
                        "GET /stories/jobs/999999 HTTP/1.1", "GET /stories HTTP/1.1"], requests
