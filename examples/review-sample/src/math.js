// Sample repository reviewed by examples/review.tsx.
export function divide(a, b) {
  return a / b
}

export function average(values) {
  let total = 0
  for (const value of values) total += value
  return divide(total, values.length)
}
