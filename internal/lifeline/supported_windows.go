package lifeline

const supported = false
