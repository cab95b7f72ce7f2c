// Pink lotus rising from still water, with two lily pads and a bud.
// Soft washes first, then the petals from the back row to the front.

function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f5f0e5');
  brush.scaleBrushes(1.5);
  brush.noStroke();
}

function draw() {
  // ---- water: two long, pale horizontal washes ----
  brush.fillBleed(0.35);
  brush.fillTexture(0.6, 0.3);
  brush.fill('#a9cbd6', 110);
  brush.beginShape(0.8);
  brush.vertex(-250, 60);
  brush.vertex(-80, 45);
  brush.vertex(120, 55);
  brush.vertex(250, 40);
  brush.vertex(260, 270);
  brush.vertex(-260, 270);
  brush.endShape(CLOSE);

  brush.fillBleed(0.25);
  brush.fillTexture(0.5, 0.4);
  brush.fill('#6fa3b8', 120);
  brush.beginShape(0.8);
  brush.vertex(-220, 150);
  brush.vertex(0, 135);
  brush.vertex(230, 150);
  brush.vertex(240, 215);
  brush.vertex(-230, 225);
  brush.endShape(CLOSE);

  // ---- lily pads ----
  lilyPad(-140, 130, 85, 0.4);
  lilyPad(150, 175, 65, -0.5);

  // ---- a closed bud on the right, on its own stalk ----
  brush.fillBleed(0.1);
  brush.fillTexture(0.4, 0.3);
  brush.fill('#6f9a52', 170);
  brush.beginShape(0.5);
  brush.vertex(174, 45);
  brush.vertex(181, 100);
  brush.vertex(186, 125);
  brush.vertex(198, 125);
  brush.vertex(193, 96);
  brush.vertex(186, 45);
  brush.endShape(CLOSE);
  pointedPetal(180, 65, 190, -55, 50, '#f3bccc', 160, 0.3);
  pointedPetal(181, 60, 189, -40, 30, '#dd6f97', 180, 0.15);

  // ---- back row of petals (paler, behind) ----
  const cx = -20;
  const cy = 75;
  const s = 1.3; // overall size of the bloom
  const back = [
    [cx - 110 * s, cy - 130 * s],
    [cx + 5 * s, cy - 175 * s],
    [cx + 115 * s, cy - 125 * s],
  ];
  for (const tip of back) {
    pointedPetal(cx, cy, tip[0], tip[1], 80 * s, '#f7c6d4', 150, 0.3);
    pointedPetal(cx, cy - 10, lerp(cx, tip[0], 0.95), lerp(cy, tip[1], 0.95), 46 * s, '#e58aaa', 165, 0.15);
  }

  // ---- golden seed pod peeking out of the middle ----
  brush.fillBleed(0.15);
  brush.fillTexture(0.4, 0.4);
  brush.fill('#f1cf5a', 210);
  brush.circle(cx, cy - 55 * s, 26 * s, 0.3);
  brush.fill('#d9a528', 200);
  brush.circle(cx, cy - 58 * s, 14 * s, 0.3);

  // ---- front row: wider petals opening outwards ----
  const front = [
    [cx - 150 * s, cy - 45 * s],
    [cx - 70 * s, cy - 105 * s],
    [cx + 75 * s, cy - 100 * s],
    [cx + 150 * s, cy - 40 * s],
    [cx + 5 * s, cy - 85 * s],
  ];
  for (const tip of front) {
    pointedPetal(cx, cy, tip[0], tip[1], 72 * s, '#f9d3dd', 160, 0.3);
    pointedPetal(cx, cy - 5, lerp(cx, tip[0], 0.97), lerp(cy, tip[1], 0.97), 38 * s, '#d95f8c', 175, 0.12);
  }

  noLoop();
}

// A lotus petal: a boat-shaped leaf from base (x0, y0) to tip (x1, y1),
// widest two-fifths of the way along and sharply pointed at the tip.
function pointedPetal(x0, y0, x1, y1, w, col, alpha, bleed) {
  const dx = x1 - x0;
  const dy = y1 - y0;
  const d = sqrt(dx * dx + dy * dy);
  const nx = -dy / d;
  const ny = dx / d;
  const mx = x0 + dx * 0.45;
  const my = y0 + dy * 0.45;

  brush.fillBleed(bleed);
  brush.fillTexture(0.45, 0.5);
  brush.fill(col, alpha);
  brush.beginShape(0.6);
  brush.vertex(x0, y0);
  brush.vertex(mx + nx * w * 0.5, my + ny * w * 0.5);
  brush.vertex(x0 + dx * 0.8 + nx * w * 0.25, y0 + dy * 0.8 + ny * w * 0.25);
  brush.vertex(x1, y1);
  brush.vertex(x0 + dx * 0.8 - nx * w * 0.25, y0 + dy * 0.8 - ny * w * 0.25);
  brush.vertex(mx - nx * w * 0.5, my - ny * w * 0.5);
  brush.endShape(CLOSE);
}

// A round pad with a small wedge cut out, squashed for perspective.
function lilyPad(x, y, r, notch) {
  for (let layer = 0; layer < 2; layer++) {
    const rr = layer === 0 ? r : r * 0.72;
    brush.fillBleed(layer === 0 ? 0.3 : 0.15);
    brush.fillTexture(0.55, 0.45);
    brush.fill(layer === 0 ? '#8fb86a' : '#4f8447', layer === 0 ? 150 : 160);
    brush.beginShape(0.7);
    brush.vertex(x, y);
    for (let i = 1; i < 12; i++) {
      const a = notch + map(i, 0, 12, 0.25, TWO_PI - 0.25);
      brush.vertex(x + cos(a) * rr, y + sin(a) * rr * 0.38);
    }
    brush.endShape(CLOSE);
  }
}
