def _my_function():
    pass

#: Unexpected doc comment
MY_FUNCTION_ALIAS = _my_function
