// multibody trajectory player: draws the scene of multibody.viz.export_html with three.js.
// The data (JSON in <script id="mb-data">) hold every drawn mesh in its body's frame and, per
// frame, the world pose of every body (3x4, row-major): a frame sets one matrix per body.
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("mb-data").textContent);
  function bytes(b64) {
    const s = atob(b64), out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out.buffer;
  }
  const f32 = (b64) => new Float32Array(bytes(b64));
  const idx = (b64, wide) => wide ? new Uint32Array(bytes(b64)) : new Uint16Array(bytes(b64));

  const W = window.innerWidth, H = window.innerHeight;
  const renderer = new THREE.WebGLRenderer({antialias: !D.flat, preserveDrawingBuffer: true});
  renderer.setPixelRatio(1);
  renderer.setSize(W, H);
  document.body.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(D.background[0], D.background[1], D.background[2]);
  const cam = new THREE.PerspectiveCamera(D.camera.fov, W / H, 0.01, 1000);
  cam.up.set(0, 0, 1);  // z up, as the model
  cam.position.fromArray(D.camera.position);
  const controls = new OrbitControls(cam, renderer.domElement);
  controls.target.fromArray(D.camera.target);
  controls.update();
  if (!D.flat) {
    scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 2.0));
    const sun = new THREE.DirectionalLight(0xffffff, 1.5);
    sun.position.set(2, -3, 5);
    scene.add(sun);
    const grid = new THREE.GridHelper(4, 16, 0x888888, 0xcccccc);
    grid.rotation.x = Math.PI / 2;  // GridHelper lies in xz; the floor is xy
    scene.add(grid);
  }

  // flat: unlit and without antialiasing, so every pixel is exactly one geometry's colour
  // one group per body; meshes in the body frame below it
  const bodies = [];
  for (let i = 0; i < D.nbodies; i++) {
    const g = new THREE.Group();
    g.matrixAutoUpdate = false;
    scene.add(g);
    bodies.push(g);
  }
  const layers = {collision: [], frames: [], com: []};
  for (const m of D.meshes) {
    const geo = new THREE.BufferGeometry();
    geo.setAttribute("position", new THREE.BufferAttribute(f32(m.v), 3));
    geo.setIndex(new THREE.BufferAttribute(idx(m.f, m.wide), 1));
    geo.computeVertexNormals();
    const color = new THREE.Color().setRGB(m.rgba[0], m.rgba[1], m.rgba[2], THREE.SRGBColorSpace);
    const opts = {color: color, transparent: m.rgba[3] < 1, opacity: m.rgba[3], side: THREE.DoubleSide};
    const mat = D.flat ? new THREE.MeshBasicMaterial(opts) : new THREE.MeshStandardMaterial(
      Object.assign(opts, {roughness: 0.6, metalness: 0.1, flatShading: m.flatShading}));
    const mesh = new THREE.Mesh(geo, mat);
    if (m.collision) { mesh.visible = D.show.collision; layers.collision.push(mesh); }
    bodies[m.body].add(mesh);
  }
  for (let i = 1; i < D.nbodies; i++) {
    const a = new THREE.AxesHelper(0.1);
    a.visible = D.show.frames;
    bodies[i].add(a);
    layers.frames.push(a);
  }
  const comLocal = f32(D.com_local);
  for (let i = 1; i < D.nbodies; i++) {
    if (!D.massive[i]) continue;
    const s = new THREE.Mesh(new THREE.SphereGeometry(0.012, 12, 8), new THREE.MeshBasicMaterial({color: 0x141414}));
    s.position.set(comLocal[3 * i], comLocal[3 * i + 1], comLocal[3 * i + 2]);
    s.visible = D.show.com;
    bodies[i].add(s);
    layers.com.push(s);
  }
  const totalCom = new THREE.Mesh(new THREE.SphereGeometry(0.025, 16, 12), new THREE.MeshBasicMaterial({color: 0xffc800}));
  totalCom.visible = D.show.com;
  scene.add(totalCom);
  layers.com.push(totalCom);

  // contacts: points and force segments, refilled each frame
  const C = D.contacts;
  let cPoints = null, cLines = null, cP = null, cF = null;
  if (C) {
    cP = f32(C.p); cF = f32(C.f);
    const pg = new THREE.BufferGeometry(), lg = new THREE.BufferGeometry();
    pg.setAttribute("position", new THREE.BufferAttribute(new Float32Array(3 * C.cap), 3));
    lg.setAttribute("position", new THREE.BufferAttribute(new Float32Array(6 * C.cap), 3));
    cPoints = new THREE.Points(pg, new THREE.PointsMaterial({color: 0xe61e1e, size: 0.02}));
    cLines = new THREE.LineSegments(lg, new THREE.LineBasicMaterial({color: 0xe61e1e}));
    scene.add(cPoints, cLines);
    cPoints.visible = cLines.visible = D.show.contacts;
  }

  const T = D.t, N = T.length, nb = D.nbodies, poses = f32(D.poses), com = f32(D.com);
  let frame = -1;
  function setFrame(k) {
    k = Math.max(0, Math.min(N - 1, k));
    frame = k;
    const o = k * (nb - 1) * 12;
    for (let i = 1; i < nb; i++) {
      const p = poses.subarray(o + (i - 1) * 12, o + i * 12);
      bodies[i].matrix.set(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], 0, 0, 0, 1);
      bodies[i].matrixWorldNeedsUpdate = true;
    }
    totalCom.position.set(com[3 * k], com[3 * k + 1], com[3 * k + 2]);
    if (C) {
      const n = C.count[k], pp = cPoints.geometry.attributes.position, lp = cLines.geometry.attributes.position;
      for (let c = 0; c < n; c++) {
        for (let a = 0; a < 3; a++) {
          const x = cP[(k * C.cap + c) * 3 + a], f = cF[(k * C.cap + c) * 3 + a];
          pp.array[3 * c + a] = x;
          lp.array[6 * c + a] = x;
          lp.array[6 * c + 3 + a] = x + C.scale * f;
        }
      }
      pp.needsUpdate = lp.needsUpdate = true;
      cPoints.geometry.setDrawRange(0, n);
      cLines.geometry.setDrawRange(0, 2 * n);
    }
    slider.value = k;
    label.textContent = "t = " + T[k].toFixed(3) + " s";
  }
  function frameAt(t) {  // the last sample at or before t
    let lo = 0, hi = N - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (T[mid] <= t + 1e-12) lo = mid; else hi = mid - 1; }
    return lo;
  }

  // controls: play/pause, time slider, speed, layer toggles
  const bar = document.getElementById("mb-bar");
  const play = document.getElementById("mb-play"), slider = document.getElementById("mb-time");
  const label = document.getElementById("mb-label"), speed = document.getElementById("mb-speed");
  slider.max = N - 1;
  if (!D.ui) bar.style.display = "none";
  let playing = D.autoplay, clock = performance.now(), t0 = T[0];
  function setPlaying(on) {
    playing = on; play.textContent = on ? "pause" : "play";
    clock = performance.now(); t0 = T[Math.max(frame, 0)];
  }
  play.onclick = () => setPlaying(!playing);
  slider.oninput = () => { setFrame(+slider.value); if (playing) setPlaying(true); };
  speed.onchange = () => setPlaying(playing);
  for (const name of ["collision", "frames", "com", "contacts"]) {
    const box = document.getElementById("mb-" + name);
    box.checked = D.show[name];
    box.onchange = () => {
      if (name === "contacts") { if (C) cPoints.visible = cLines.visible = box.checked; }
      else for (const o of layers[name]) o.visible = box.checked;
    };
  }
  setFrame(0);
  setPlaying(playing);
  function tick(now) {
    if (playing && N > 1) {
      let t = t0 + (+speed.value) * (now - clock) / 1000;
      if (t > T[N - 1]) { clock = now; t0 = T[0]; t = T[0]; }
      const k = frameAt(t);
      if (k !== frame) setFrame(k);
    }
    controls.update();
    renderer.render(scene, cam);
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
  // for scripts (tests, video export): stop playback and show time t, drawn when the promise resolves
  window.mbPlayer = {
    duration: T[N - 1] - T[0], times: T,
    setTime(t) {
      setPlaying(false); setFrame(frameAt(t)); renderer.render(scene, cam);
      return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(T[frame]))));
    },
    frame: () => frame, playing: () => playing,
  };
  window.mbReady = true;
})();
