// A horizontal bar chart (Chart.js on a canvas) with its numbers as a table: the chart for the eye, the table for all.
import { BarController, BarElement, CategoryScale, Chart, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';

// Only what bar charts use, so the rest of Chart.js stays out of the bundle.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

export interface Bar {
  key: string;
  count: number;
}

export function BarChart({ title, bars }: { title: string; bars: Bar[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels: bars.map((bar) => bar.key), datasets: [{ label: title, data: bars.map((bar) => bar.count), backgroundColor: '#1d4ed8' }] },
      options: {
        indexAxis: 'y',
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: false } },
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    return () => chart.destroy();
  }, [title, bars]);
  const summary = bars.map((bar) => `${bar.key} ${bar.count}`).join(', ');
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {bars.length === 0 ? (
        <p className="muted">No data.</p>
      ) : (
        <>
          <div className="chart-canvas" style={{ height: `${Math.max(80, bars.length * 28 + 40)}px` }}>
            <canvas ref={canvas} role="img" aria-label={`${title}: ${summary}`} />
          </div>
          <details>
            <summary>Numbers</summary>
            <table>
              <thead>
                <tr>
                  <th scope="col">{title}</th>
                  <th scope="col">Subscribers</th>
                </tr>
              </thead>
              <tbody>
                {bars.map((bar) => (
                  <tr key={bar.key}>
                    <td>{bar.key}</td>
                    <td>{bar.count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </figure>
  );
}
