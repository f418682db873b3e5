// learn.js: exercises, copy view and layout algebra (filled in below).
