"""What the Python entry points' argument errors must look like (opval.arguments)."""


def assert_names(caught, call: str, parameter: str) -> None:
    """One line, naming the call and the parameter, then what it takes and what it got."""
    message = str(caught.value)
    assert message.startswith(f"{call}: {parameter} must be "), message
    assert ", not " in message and "\n" not in message, message
