// Cherry blossom branch: a dark twig crossing the paper, clusters of
// five-petalled pink flowers, a few buds and some falling petals.

let branch = [];
let twig = [];

function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f7f2ea');
  brush.scaleBrushes(1.5);
  brush.noStroke();

  // the main branch runs from the lower left to the upper right
  branch = [
    [-270, 170], [-160, 110], [-60, 70], [40, 0], [150, -70], [270, -120],
  ];
  // a thinner twig forks upwards from the middle
  twig = [
    [-40, 60], [-15, -70], [30, -190],
  ];
}

function draw() {
  paintLimb(branch, 16, 5);
  paintLimb(twig, 8, 3);

  // open flowers sitting on the wood
  const flowers = [
    [-150, 100, 52, 0.2],
    [-80, 50, 42, 1.1],
    [25, 10, 58, 0.6],
    [115, -50, 48, 1.7],
    [200, -100, 42, 0.9],
    [-20, -110, 42, 2.4],
    [28, -185, 36, 0.3],
  ];
  for (const f of flowers) {
    blossom(f[0], f[1], f[2], f[3]);
  }

  // little closed buds
  brush.fillBleed(0.15);
  brush.fillTexture(0.4, 0.4);
  brush.fill('#e3809f', 200);
  brush.circle(-205, 145, 9, 0.3);
  brush.circle(40, -200, 8, 0.3);

  // petals drifting down
  for (let i = 0; i < 2; i++) {
    const x = random(-200, 200);
    const y = random(130, 230);
    fallingPetal(x, y, random(10, 15), random(TWO_PI));
  }

  noLoop();
}

// A tapered limb, painted segment by segment the way a brush would
// travel along it: a pale wash first, then a darker, thinner core.
function paintLimb(pts, w0, w1) {
  const layers = [
    { col: '#8f7264', alpha: 170, k: 1.0, bleed: 0.15, tex: 0.4 },
    { col: '#4b3630', alpha: 210, k: 0.55, bleed: 0.1, tex: 0.5 },
  ];
  const last = pts.length - 1;
  for (const L of layers) {
    brush.fillBleed(L.bleed);
    brush.fillTexture(L.tex, 0.3);
    brush.fill(L.col, L.alpha);
    for (let i = 0; i < last; i++) {
      const [x0, y0] = pts[i];
      const [x1, y1] = pts[i + 1];
      const d = dist(x0, y0, x1, y1);
      // unit normal of this segment
      const nx = -(y1 - y0) / d;
      const ny = (x1 - x0) / d;
      const wa = lerp(w0, w1, i / last) * L.k;
      const wb = lerp(w0, w1, (i + 1) / last) * L.k;
      brush.beginShape(0.3);
      brush.vertex(x0 + nx * wa, y0 + ny * wa);
      brush.vertex(x1 + nx * wb, y1 + ny * wb);
      brush.vertex(x1 - nx * wb, y1 - ny * wb);
      brush.vertex(x0 - nx * wa, y0 - ny * wa);
      brush.endShape(CLOSE);
    }
  }
}

// outline of a five-petalled flower with a small notch in each petal
function flowerOutline(x, y, R, turn) {
  const n = 40;
  brush.beginShape(0.7);
  for (let i = 0; i < n; i++) {
    const a = (TWO_PI * i) / n;
    const lobe = abs(sin((5 * a) / 2));
    // the notch: dip slightly right at the top of each lobe
    const notch = lobe > 0.97 ? 0.9 : 1;
    const r = R * (0.35 + 0.65 * lobe) * notch;
    brush.vertex(x + cos(a + turn) * r, y + sin(a + turn) * r);
  }
  brush.endShape(CLOSE);
}

function blossom(x, y, R, turn) {
  // pale blush over the whole flower
  brush.fillBleed(0.3);
  brush.fillTexture(0.5, 0.35);
  brush.fill('#f29bb5', 200);
  flowerOutline(x, y, R, turn);

  // deeper pink nearer the middle
  brush.fillBleed(0.15);
  brush.fillTexture(0.45, 0.5);
  brush.fill('#e06d93', 200);
  flowerOutline(x, y, R * 0.65, turn + 0.1);

  // a small magenta eye
  brush.fillBleed(0.1);
  brush.fillTexture(0.3, 0.3);
  brush.fill('#c23f69', 210);
  brush.circle(x, y, R * 0.18, 0.3);
}

// a single loose petal, a small notched oval
function fallingPetal(x, y, s, a) {
  push();
  translate(x, y);
  rotate(a);
  brush.fillBleed(0.2);
  brush.fillTexture(0.4, 0.4);
  brush.fill('#f2a9bf', 170);
  brush.beginShape(0.8);
  brush.vertex(0, -s);
  brush.vertex(s * 0.7, -s * 0.3);
  brush.vertex(s * 0.5, s * 0.6);
  brush.vertex(0, s * 0.3);
  brush.vertex(-s * 0.5, s * 0.6);
  brush.vertex(-s * 0.7, -s * 0.3);
  brush.endShape(CLOSE);
  pop();
}
