name={NAME} x={X}
