// Three tulips in a row: red, yellow and violet, with long leaves.
// Canvas coordinates are shifted so (0, 0) is the top-left corner.

// cup outlines in local units: x to the right, y upwards is negative,
// (0, 0) is the bottom of the cup where it meets the stem
const CUP = [
  [0, 0], [-40, -15], [-47, -60], [-40, -104], [-20, -84],
  [0, -108], [20, -84], [40, -104], [47, -60], [40, -15],
];
const LEFT_PETAL = [
  [0, 0], [-36, -18], [-42, -62], [-37, -100], [-16, -72], [-6, -30],
];
const RIGHT_PETAL = [
  [0, 0], [6, -30], [16, -72], [37, -100], [42, -62], [36, -18],
];
const FRONT_PETAL = [
  [0, 3], [-22, -18], [-25, -66], [0, -100], [25, -66], [22, -18],
];

function setup() {
  createCanvas(512, 512, WEBGL);
  background('#f6f1e7');
  brush.scaleBrushes(1.5);
  brush.noStroke();
}

function draw() {
  translate(-width / 2, -height / 2);

  // soft ground shadow
  brush.fillBleed(0.35);
  brush.fillTexture(0.6, 0.3);
  brush.fill('#c9d6a8', 110);
  brush.beginShape(0.9);
  brush.vertex(40, 470);
  brush.vertex(250, 445);
  brush.vertex(470, 468);
  brush.vertex(460, 520);
  brush.vertex(50, 520);
  brush.endShape(CLOSE);

  // leaves
  leftLeaf(150, 490);
  rightLeaf(350, 495);

  // stems (thin, slightly bowed)
  stem(135, 225, 180, 490);
  stem(265, 165, 255, 490);
  stem(385, 250, 330, 490);

  // flowers: position, size, and light / mid / dark colours
  tulip(135, 225, 1.0, '#f4a08c', '#e4553f', '#c22b2b');
  tulip(265, 165, 1.15, '#fbe38a', '#f5c842', '#e39a1c');
  tulip(385, 250, 0.9, '#d8b4e6', '#b27bd0', '#7d45a8');

  brush.noFill();
  noLoop();
}

function tulip(x, y, s, light, mid, dark) {
  // 1. the whole cup as one big light wash
  brush.fillBleed(0.3);
  brush.fillTexture(0.5, 0.35);
  brush.fill(light, 180);
  shape(CUP, x, y, s * 1.05);

  // 2. the two side petals, deeper
  brush.fillBleed(0.2);
  brush.fillTexture(0.5, 0.5);
  brush.fill(mid, 170);
  shape(LEFT_PETAL, x - 3, y, s);
  shape(RIGHT_PETAL, x + 3, y, s);

  // 3. the front petal, strongest colour
  brush.fillBleed(0.15);
  brush.fillTexture(0.45, 0.55);
  brush.fill(dark, 190);
  shape(FRONT_PETAL, x, y + 2, s * 0.9);
}

function shape(points, x, y, s) {
  brush.beginShape(0.55);
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    brush.vertex(x + p[0] * s + random(-1.5, 1.5), y + p[1] * s + random(-1.5, 1.5));
  }
  brush.endShape(CLOSE);
}

function stem(x0, y0, x1, y1) {
  brush.fillBleed(0.1);
  brush.fillTexture(0.3, 0.2);
  brush.fill('#5f8f45', 190);
  brush.beginShape(0.8);
  brush.vertex(x0 - 4, y0);
  brush.vertex(lerp(x0, x1, 0.5) - 6, lerp(y0, y1, 0.5));
  brush.vertex(x1 - 5, y1);
  brush.vertex(x1 + 5, y1);
  brush.vertex(lerp(x0, x1, 0.5) + 6, lerp(y0, y1, 0.5));
  brush.vertex(x0 + 4, y0);
  brush.endShape(CLOSE);
}

// a long strap leaf curling out to the left
function leftLeaf(x, y) {
  brush.fillBleed(0.3);
  brush.fillTexture(0.6, 0.4);
  brush.fill('#9cc27a', 150);
  brush.beginShape(0.6);
  brush.vertex(x + 20, y);
  brush.vertex(x + 10, y - 120);
  brush.vertex(x - 30, y - 230);
  brush.vertex(x - 70, y - 260);
  brush.vertex(x - 45, y - 190);
  brush.vertex(x - 25, y - 100);
  brush.vertex(x - 20, y);
  brush.endShape(CLOSE);

  brush.fillBleed(0.15);
  brush.fillTexture(0.5, 0.5);
  brush.fill('#4e8240', 160);
  brush.beginShape(0.6);
  brush.vertex(x + 10, y);
  brush.vertex(x + 2, y - 120);
  brush.vertex(x - 32, y - 215);
  brush.vertex(x - 30, y - 160);
  brush.vertex(x - 15, y - 90);
  brush.vertex(x - 10, y);
  brush.endShape(CLOSE);
}

// and one curling out to the right
function rightLeaf(x, y) {
  brush.fillBleed(0.3);
  brush.fillTexture(0.6, 0.4);
  brush.fill('#9cc27a', 150);
  brush.beginShape(0.6);
  brush.vertex(x - 20, y);
  brush.vertex(x - 5, y - 110);
  brush.vertex(x + 40, y - 210);
  brush.vertex(x + 90, y - 235);
  brush.vertex(x + 55, y - 170);
  brush.vertex(x + 30, y - 90);
  brush.vertex(x + 22, y);
  brush.endShape(CLOSE);

  brush.fillBleed(0.15);
  brush.fillTexture(0.5, 0.5);
  brush.fill('#4e8240', 160);
  brush.beginShape(0.6);
  brush.vertex(x - 10, y);
  brush.vertex(x + 2, y - 110);
  brush.vertex(x + 42, y - 195);
  brush.vertex(x + 35, y - 140);
  brush.vertex(x + 18, y - 80);
  brush.vertex(x + 12, y);
  brush.endShape(CLOSE);
}
