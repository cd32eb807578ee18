// A tiny benchmark harness: warm up, run several rounds, report the median per-item cost.
// The machines are noisy, so only medians are printed, never single runs.

export async function measure(label, { items, rounds = 11, warmup = 4, run }) {
  for (let i = 0; i < warmup; i++) await run()
  const perItem = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await run()
    perItem.push(((performance.now() - started) * 1000) / items)
  }
  perItem.sort((a, b) => a - b)
  const median = perItem[Math.floor(perItem.length / 2)]
  const spread = `${perItem[0].toFixed(2)}–${perItem[perItem.length - 1].toFixed(2)}`
  console.log(`${label.padEnd(48)} median ${median.toFixed(2)} µs/item  (min–max ${spread}, ${rounds} rounds × ${items} items)`)
  return median
}
