// Pink peonies: two full, ruffled blooms and a closed bud,
// loose leaves underneath. Layers go light to dark, big to small.

const palette = {
  paper: '#f7f0e6',
  blush: '#f6bfcb',
  pink: '#ee9db2',
  rose: '#e07a98',
  deep: '#c94f78',
  leafLight: '#a3c27c',
  leafDark: '#5c8a4a',
};

function setup() {
  createCanvas(512, 512, WEBGL);
  background(palette.paper);
  brush.scaleBrushes(1.5);
  brush.noStroke();
}

function draw() {
  // leaves first, tucked under the flowers
  peonyLeaf(-90, 25, 2.2, 200);
  peonyLeaf(-20, 45, 1.25, 190);
  peonyLeaf(-140, -50, 3.5, 160);
  peonyLeaf(150, 130, 0.45, 150);

  // the bud, top right
  bud(140, -130, 38);

  // a big peony and a smaller one overlapping it
  peony(-55, -35, 125);
  peony(125, 95, 80);

  noLoop();
}

// An irregular, ruffled closed blob around (x, y).
// lobes controls how wavy the edge is, amp how deep the waves go.
function ruffle(x, y, r, lobes, amp) {
  const n = 18;
  const phase = random(TWO_PI);
  brush.beginShape(0.8);
  for (let i = 0; i < n; i++) {
    const a = (TWO_PI * i) / n;
    const k = 1 + amp * sin(a * lobes + phase) + random(-amp, amp) * 0.5;
    brush.vertex(x + cos(a) * r * k, y + sin(a) * r * k * 0.9);
  }
  brush.endShape(CLOSE);
}

function peony(x, y, r) {
  // 1. the whole flower as one soft blush wash
  brush.fillBleed(0.35);
  brush.fillTexture(0.5, 0.3);
  brush.fill(palette.blush, 190);
  ruffle(x, y, r, 6, 0.12);

  // 2. five outer petals as round lobes
  brush.fillBleed(0.2);
  brush.fillTexture(0.45, 0.5);
  brush.fill(palette.pink, 170);
  const turn = random(TWO_PI);
  for (let i = 0; i < 5; i++) {
    const a = turn + (TWO_PI * i) / 5;
    brush.circle(x + cos(a) * r * 0.55, y + sin(a) * r * 0.5, r * 0.48, 0.6);
  }

  // 3. the inner cup, two rings getting darker
  brush.fillBleed(0.2);
  brush.fillTexture(0.5, 0.5);
  brush.fill(palette.rose, 170);
  ruffle(x, y - r * 0.05, r * 0.55, 5, 0.15);

  brush.fillBleed(0.15);
  brush.fillTexture(0.6, 0.5);
  brush.fill(palette.deep, 170);
  ruffle(x, y - r * 0.08, r * 0.32, 4, 0.18);

  // 4. curled crescent petals folding over the centre
  brush.fillBleed(0.1);
  brush.fillTexture(0.4, 0.6);
  brush.fill(palette.deep, 200);
  for (let i = 0; i < 3; i++) {
    const a = -HALF_PI + (i - 1) * 0.9 + random(-0.2, 0.2);
    crescent(x, y - r * 0.05, r * 0.28, a);
  }
}

// a thin curved sliver, like the edge of a cupped petal
function crescent(x, y, r, a) {
  push();
  translate(x, y);
  rotate(a);
  brush.beginShape(0.7);
  brush.vertex(-r, 0);
  brush.vertex(-r * 0.5, -r * 0.55);
  brush.vertex(r * 0.5, -r * 0.55);
  brush.vertex(r, 0);
  brush.vertex(r * 0.4, -r * 0.25);
  brush.vertex(-r * 0.4, -r * 0.25);
  brush.endShape(CLOSE);
  pop();
}

function bud(x, y, r) {
  brush.fillBleed(0.3);
  brush.fillTexture(0.5, 0.4);
  brush.fill(palette.pink, 150);
  brush.circle(x, y, r, 0.4);

  brush.fillBleed(0.15);
  brush.fillTexture(0.5, 0.5);
  brush.fill(palette.deep, 170);
  brush.circle(x + 4, y + 5, r * 0.55, 0.5);

  // green sepals cupping the bud from below
  brush.fill(palette.leafDark, 150);
  brush.beginShape(0.6);
  brush.vertex(x - r, y + r * 0.3);
  brush.vertex(x, y + r * 1.2);
  brush.vertex(x + r, y + r * 0.3);
  brush.vertex(x, y + r * 0.75);
  brush.endShape(CLOSE);
}

function peonyLeaf(x, y, a, len) {
  push();
  translate(x, y);
  rotate(a);
  for (let pass = 0; pass < 2; pass++) {
    const s = pass === 0 ? 1 : 0.7;
    brush.fillBleed(pass === 0 ? 0.3 : 0.15);
    brush.fillTexture(0.55, 0.4);
    brush.fill(pass === 0 ? palette.leafLight : palette.leafDark, pass === 0 ? 160 : 170);
    brush.beginShape(0.5);
    brush.vertex(0, 0);
    brush.vertex(len * 0.35 * s, -len * 0.27 * s);
    brush.vertex(len * s, 0);
    brush.vertex(len * 0.35 * s, len * 0.27 * s);
    brush.endShape(CLOSE);
  }
  pop();
}
