"""The domain's refusals, each with its HTTP status and the contract's error code.

Raised anywhere below the handlers; turned into a response in one place
(app/web/errors.py, `handle_app_error`), as `{"error": {"code": ..., "message": ...}}`
for JSON clients or a friendly page.
"""

from __future__ import annotations


class AppError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        field: str | None = None,
        retry_after_s: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.code
        self.field = field
        self.retry_after_s = retry_after_s


class BadRequest(AppError):
    status_code = 400


class Unauthorized(AppError):
    status_code = 401
    code = "unauthorized"


class Forbidden(AppError):
    status_code = 403
    code = "forbidden"


class NotFound(AppError):
    status_code = 404
    code = "not_found"


class Conflict(AppError):
    """The job is not in a state that allows this (finished already, nothing to finish)."""

    status_code = 409
    code = "conflict"


class ClientGone(AppError):
    """The client left before its request's body arrived: nobody to answer."""

    status_code = 400
    code = "client_disconnected"


class TooLarge(AppError):
    status_code = 413
    code = "body_too_large"


class Invalid(AppError):
    """A field is wrong; `field` names it so a form can show the message beside it.
    `message` names the field for the JSON API; `said` is the same in a family's words,
    for the form (the message itself when none is given)."""

    status_code = 422
    code = "invalid_request"

    def __init__(
        self, message: str, *, code: str | None = None, field: str | None = None,
        said: str | None = None,
    ) -> None:
        super().__init__(message, code=code, field=field)
        self.said = said or message


class Busy(AppError):
    """Not now: the queue is full or the day's stories are used up."""

    status_code = 429


class Unavailable(AppError):
    status_code = 503
    code = "unavailable"
